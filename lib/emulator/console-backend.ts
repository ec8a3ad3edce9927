import type { ConsoleAccount, ConsoleBackend } from './console-api';
import type { WebhookRegistry } from './webhook-registry';

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
