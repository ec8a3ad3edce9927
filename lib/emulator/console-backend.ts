import type { EmulatedWebhook, RegisterWebhookInput } from './emulator-types';
import type { WebhookRegistry } from './webhook-registry';

/** The emulator's console API account: what a `ConsoleClient` or the CLI signs its requests with. */
export interface ConsoleAccount {
  /** The account id, `acct_emulator` unless you chose one. */
  accountId: string;
  /** The account's secret key: local, random and throwaway unless you chose one. */
  secretKey: string;
}

/** What the console API needs of the emulator. */
export interface ConsoleBackend {
  accounts: ReadonlyMap<string, ConsoleAccount>;
  webhooksOf(accountId: string): EmulatedWebhook[];
  create(accountId: string, input: RegisterWebhookInput): EmulatedWebhook;
  remove(accountId: string, id: string): boolean;
  verify(accountId: string, id: string): { id: string; verified: boolean; status: 200 | 202 } | undefined;
}

/** The console API's view of the emulator's webhooks: one account, and only its own webhooks. */
export function consoleBackend(account: ConsoleAccount, registry: WebhookRegistry): ConsoleBackend {
  const owned = (accountId: string, id: string) => registry.find(id)?.accountId === accountId;
  return {
    accounts: new Map([[account.accountId, account]]),
    webhooksOf: (accountId) => registry.all().filter((w) => w.accountId === accountId),
    create: (accountId, input) => {
      const webhook = registry.create(accountId, input);
      void registry.handshake(webhook);
      return webhook;
    },
    remove: (accountId, id) => owned(accountId, id) && registry.remove(id),
    verify: (accountId, id) => (owned(accountId, id) ? registry.verify(id) : undefined),
  };
}
