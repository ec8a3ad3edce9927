import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isEventType, type EventType } from '../events/catalogue';
import type { Layout } from '../events/webhook-event';
import { buildEvent, type DeliveryEnvelope } from '../testing/build-event';
import { checkWebhookUrl } from './check-webhook-url';
import type { ConsoleAccount, ConsoleBackend } from './console-api';
import type { ResolvedEmulatorOptions } from './create-emulator';
import { DeliveryScheduler } from './delivery-scheduler';
import type {
  AttemptRecord,
  DeliveryRecord,
  EmitResult,
  EmulatedWebhook,
  RegisterWebhookInput,
} from './emulator-types';
import { postHandshake } from './outbound';
import { waitUntil, type WaitOptions } from './wait-until';

export interface EmitOptions {
  /** Defaults to `'A'`. */
  layout?: Layout;
  id?: string;
  time?: string;
}

/** A local stand-in for the Service: console API, handshakes, and deliveries with retries. */
export class Emulator {
  /** Base URL of the console API, e.g. `http://127.0.0.1:53211`. */
  readonly url: string;
  readonly account: ConsoleAccount;
  readonly #server: http.Server;
  readonly #webhooks = new Map<string, EmulatedWebhook & { accountId: string }>();
  readonly #scheduler: DeliveryScheduler;
  readonly #handshakes = new Set<Promise<boolean>>();
  readonly #options: ResolvedEmulatorOptions;

  /** Use {@link createEmulator}. */
  constructor(server: http.Server, account: ConsoleAccount, options: ResolvedEmulatorOptions) {
    this.#server = server;
    this.account = account;
    this.#options = options;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    this.#scheduler = new DeliveryScheduler(options, (id) => this.#webhooks.get(id));
  }

  /** Every delivery attempt so far, in order. */
  get attempts(): readonly AttemptRecord[] {
    return this.#scheduler.attempts;
  }

  /** Every delivery (one event to one webhook) so far. */
  get deliveries(): readonly DeliveryRecord[] {
    return this.#scheduler.deliveries;
  }

  /** Deliveries given up after the retry window. */
  get dropped(): readonly DeliveryRecord[] {
    return this.#scheduler.deliveries.filter((d) => d.state === 'dropped');
  }

  /** Registers a webhook and sends it the handshake; resolves once the handshake was answered or failed. */
  async registerWebhook(input: RegisterWebhookInput): Promise<EmulatedWebhook> {
    const webhook = this.#create(this.account.accountId, input);
    await this.#handshake(webhook);
    return { ...webhook };
  }

  /** Changes a webhook; a new URL makes it unverified and sends the handshake again. */
  async updateWebhook(
    id: string,
    change: Partial<Omit<RegisterWebhookInput, 'authMethod'>>,
  ): Promise<EmulatedWebhook> {
    const webhook = this.#get(id);
    if (change.url !== undefined) checkWebhookUrl(change.url);
    if (change.name !== undefined) webhook.name = change.name;
    if (change.subscribedEvents !== undefined)
      webhook.subscribedEvents = this.#events(change.subscribedEvents);
    if (change.url !== undefined && change.url !== webhook.url) {
      webhook.url = change.url;
      webhook.verified = false;
      await this.#handshake(webhook);
    }
    return { ...webhook };
  }

  /** Spec 4.4: 200 when already verified; otherwise 202 and the challenge is sent again. */
  verifyWebhook(id: string): { id: string; verified: boolean; status: 200 | 202 } {
    const webhook = this.#get(id);
    if (webhook.verified) return { id, verified: true, status: 200 };
    void this.#handshake(webhook);
    return { id, verified: false, status: 202 };
  }

  deleteWebhook(id: string): boolean {
    return this.#webhooks.delete(id);
  }

  listWebhooks(): EmulatedWebhook[] {
    return [...this.#webhooks.values()].map((w) => ({ ...w }));
  }

  getWebhook(id: string): EmulatedWebhook | undefined {
    const webhook = this.#webhooks.get(id);
    return webhook && { ...webhook };
  }

  /** Builds an event and delivers it to every verified webhook subscribed to its type, and no other. */
  emit(type: EventType, data: Record<string, unknown> = {}, options: EmitOptions = {}): EmitResult {
    const event = buildEvent(type, data, {
      ...options,
      origin: this.#options.origin,
      schemaBaseUrl: this.url,
    });
    return this.deliver(event);
  }

  /** Delivers an envelope as is: sending the same one twice is how the Service duplicates an event. */
  deliver(event: DeliveryEnvelope): EmitResult {
    const targets = [...this.#webhooks.values()].filter(
      (w) => w.verified && (w.subscribedEvents as string[]).includes(event.type),
    );
    return { event, deliveries: targets.map((webhook) => this.#scheduler.start(webhook, event)) };
  }

  /** Resolves once every delivery matching `filter` has been acknowledged or dropped (and at least `count` exist). */
  waitForDeliveries(
    filter: { eventId?: string; webhookId?: string; count?: number } = {},
    options: WaitOptions = {},
  ): Promise<DeliveryRecord[]> {
    const matching = () =>
      this.deliveries.filter(
        (d) =>
          (filter.eventId === undefined || d.eventId === filter.eventId) &&
          (filter.webhookId === undefined || d.webhookId === filter.webhookId),
      );
    const done = () => {
      const found = matching();
      return found.length >= (filter.count ?? 1) && found.every((d) => d.state !== 'pending');
    };
    return waitUntil(
      done,
      options,
      () => `${matching().filter((d) => d.state === 'pending').length} deliveries pending`,
    ).then(matching);
  }

  /** Resolves once no delivery is pending and no handshake is in flight. */
  waitForIdle(options: WaitOptions = {}): Promise<void> {
    return waitUntil(
      () => this.#scheduler.pending === 0 && this.#handshakes.size === 0,
      options,
      () => `${this.#scheduler.pending} deliveries and ${this.#handshakes.size} handshakes pending`,
    );
  }

  /** Stops retrying, waits for attempts in flight, and closes the server. */
  async close(): Promise<void> {
    await this.#scheduler.close();
    await Promise.allSettled([...this.#handshakes]);
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** The console API's view of this emulator. */
  get backend(): ConsoleBackend {
    return {
      accounts: new Map([[this.account.accountId, this.account]]),
      webhooksOf: (accountId) => [...this.#webhooks.values()].filter((w) => w.accountId === accountId),
      create: (accountId, input) => {
        const webhook = this.#create(accountId, input);
        void this.#handshake(webhook);
        return webhook;
      },
      remove: (accountId, id) => this.#webhooks.get(id)?.accountId === accountId && this.#webhooks.delete(id),
      verify: (accountId, id) =>
        this.#webhooks.get(id)?.accountId === accountId ? this.verifyWebhook(id) : undefined,
    };
  }

  #create(accountId: string, input: RegisterWebhookInput): EmulatedWebhook & { accountId: string } {
    const webhook = {
      id: `wh_${randomUUID().replace(/-/g, '').slice(0, 16)}`,
      name: input.name,
      url: checkWebhookUrl(input.url),
      authMethod: input.authMethod ?? 'bearer_token',
      subscribedEvents: this.#events(input.subscribedEvents),
      verified: false,
      privateKey: `whsk_${randomBytes(24).toString('base64url')}`,
      createdAt: new Date().toISOString(),
      accountId,
    };
    this.#webhooks.set(webhook.id, webhook);
    return webhook;
  }

  #events(types: readonly string[]): EventType[] {
    const unknown = types.filter((t) => !isEventType(t));
    if (types.length === 0 || unknown.length > 0) {
      throw new TypeError(
        `[service-webhooks] emulator: subscribedEvents must be event types of the catalogue (got ${JSON.stringify(unknown.length ? unknown : types)})`,
      );
    }
    return [...types] as EventType[];
  }

  #get(id: string): EmulatedWebhook & { accountId: string } {
    const webhook = this.#webhooks.get(id);
    if (webhook === undefined) throw new Error(`[service-webhooks] emulator: no webhook ${id}`);
    return webhook;
  }

  async #handshake(webhook: EmulatedWebhook & { accountId: string }): Promise<boolean> {
    const challenge = randomBytes(18).toString('base64url');
    const url = webhook.url;
    const sent = postHandshake(webhook, challenge, this.#options.attemptTimeoutMs);
    this.#handshakes.add(sent);
    try {
      const echoed = await sent;
      // A URL changed while the handshake was out must be verified again.
      if (webhook.url === url && this.#webhooks.has(webhook.id)) webhook.verified = echoed;
      return echoed;
    } finally {
      this.#handshakes.delete(sent);
    }
  }
}
