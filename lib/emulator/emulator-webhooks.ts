import type { ResolvedLogger } from '../logger';
import { ChangeFeed } from './change-feed';
import type { ConsoleAccount, ConsoleBackend } from './console-api';
import { consoleBackend } from './console-backend';
import { withoutKey } from './emulator-state';
import type { EmulatorTls } from './emulator-tls';
import type { EmulatedWebhook, EmulatorChange, RegisterWebhookInput } from './emulator-types';
import { WebhookRegistry, type StoredWebhook } from './webhook-registry';

export const publicView = ({ accountId: _a, ...webhook }: StoredWebhook): EmulatedWebhook => ({ ...webhook });

/** The emulator's webhooks and who hears of their changes; {@link Emulator} adds events and deliveries. */
export class EmulatorWebhooks {
  /** The console API account: its id and secret key sign requests to {@link url}. */
  readonly account: ConsoleAccount;
  /** @internal */
  protected readonly registry: WebhookRegistry;
  /** @internal */
  protected readonly feed: ChangeFeed;

  constructor(account: ConsoleAccount, attemptTimeoutMs: number, logger: ResolvedLogger, tls?: EmulatorTls) {
    this.account = account;
    this.feed = new ChangeFeed(logger);
    this.registry = new WebhookRegistry(
      attemptTimeoutMs,
      (change) =>
        this.feed.publish(
          'deleted' in change
            ? { kind: 'webhook-deleted', id: change.deleted }
            : { kind: 'webhook', webhook: withoutKey(publicView(change)) },
        ),
      tls,
    );
  }

  /** Calls `listener` with every change from now on; returns the function that stops it. */
  subscribe(listener: (change: EmulatorChange) => void): () => void {
    return this.feed.subscribe(listener);
  }

  /** Registers a webhook and sends it the handshake; resolves once the handshake was answered or failed. */
  async registerWebhook(input: RegisterWebhookInput): Promise<EmulatedWebhook> {
    const webhook = this.registry.create(this.account.accountId, input);
    await this.registry.handshake(webhook);
    return publicView(webhook);
  }

  /** Changes a webhook; a new URL makes it unverified and sends the handshake again. */
  async updateWebhook(
    id: string,
    change: Partial<Omit<RegisterWebhookInput, 'authMethod'>>,
  ): Promise<EmulatedWebhook> {
    return publicView(await this.registry.update(id, change));
  }

  /** Spec 4.4: 200 when already verified; otherwise 202 and the challenge is sent again. */
  verifyWebhook(id: string): {
    /** The webhook's id. */
    id: string;
    /** Whether it was already verified. */
    verified: boolean;
    /** 200: already verified; 202: the challenge is being sent again. */
    status: 200 | 202;
  } {
    return this.registry.verify(id);
  }

  /** Sends the handshake now, verified or not, and resolves with what it got back. */
  async handshake(id: string): Promise<EmulatedWebhook> {
    const webhook = this.registry.get(id);
    await this.registry.handshake(webhook);
    return publicView(webhook);
  }

  /** Deletes a webhook: no more deliveries go to it. False when there was none with this id. */
  deleteWebhook(id: string): boolean {
    return this.registry.remove(id);
  }

  /** Every registered webhook, oldest first. */
  listWebhooks(): EmulatedWebhook[] {
    return this.registry.all().map(publicView);
  }

  /** The webhook with this id, or undefined. */
  getWebhook(id: string): EmulatedWebhook | undefined {
    const webhook = this.registry.find(id);
    return webhook && publicView(webhook);
  }

  /**
   * The console API's view of this emulator.
   * @internal
   */
  get backend(): ConsoleBackend {
    return consoleBackend(this.account, this.registry);
  }
}
