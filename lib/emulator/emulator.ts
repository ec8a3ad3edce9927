import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EventType } from '../events/catalogue';
import type { Layout } from '../events/webhook-event';
import type { ResolvedLogger } from '../logger';
import { buildEvent, type DeliveryEnvelope } from '../testing/build-event';
import type { ConsoleAccount, ConsoleBackend } from './console-api';
import { ChangeFeed } from './change-feed';
import { consoleBackend } from './console-backend';
import type { ResolvedEmulatorOptions } from './create-emulator';
import { DeliveryScheduler } from './delivery-scheduler';
import type {
  AttemptRecord,
  DeliveryRecord,
  EmitResult,
  EmulatedWebhook,
  EmulatorChange,
  RegisterWebhookInput,
} from './emulator-types';
import { withoutKey } from './emulator-state';
import { unreceivedWarning } from './unreceived-warning';
import { waitForDeliveries, waitUntil, type DeliveryFilter, type WaitOptions } from './wait-until';
import { WebhookRegistry, type StoredWebhook } from './webhook-registry';

export interface EmitOptions {
  /** Defaults to `'A'`. */
  layout?: Layout;
  id?: string;
  time?: string;
}

/** The events kept for `resend` and the web console; older ones are forgotten. */
const KEPT_EVENTS = 1000;

const publicView = ({ accountId: _a, ...webhook }: StoredWebhook): EmulatedWebhook => ({ ...webhook });

/** A local stand-in for the Service: console API, handshakes, deliveries with retries, a web console. */
export class Emulator {
  /** Base URL of the console API, e.g. `http://127.0.0.1:53211`; the web console is at its root. */
  readonly url: string;
  readonly account: ConsoleAccount;
  readonly #server: http.Server;
  readonly #registry: WebhookRegistry;
  readonly #scheduler: DeliveryScheduler;
  readonly #options: ResolvedEmulatorOptions;
  readonly #logger: ResolvedLogger;
  readonly #events = new Map<string, DeliveryEnvelope>();
  readonly #feed: ChangeFeed;

  /** Use {@link createEmulator}. */
  constructor(
    server: http.Server,
    account: ConsoleAccount,
    options: ResolvedEmulatorOptions,
    logger: ResolvedLogger,
  ) {
    this.#server = server;
    this.account = account;
    this.#options = options;
    this.#logger = logger;
    this.#feed = new ChangeFeed(logger);
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    this.#registry = new WebhookRegistry(options.attemptTimeoutMs, (change) =>
      this.#feed.publish(
        'deleted' in change
          ? { kind: 'webhook-deleted', id: change.deleted }
          : { kind: 'webhook', webhook: withoutKey(publicView(change)) },
      ),
    );
    this.#scheduler = new DeliveryScheduler(options, (id) => this.#registry.find(id));
    this.#feed.follow(this.#scheduler);
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

  /** The most recent events emitted or delivered (up to 1000), oldest first. */
  get events(): readonly DeliveryEnvelope[] {
    return [...this.#events.values()];
  }

  /** Calls `listener` with every change from now on; returns the function that stops it. */
  subscribe(listener: (change: EmulatorChange) => void): () => void {
    return this.#feed.subscribe(listener);
  }

  /** Registers a webhook and sends it the handshake; resolves once the handshake was answered or failed. */
  async registerWebhook(input: RegisterWebhookInput): Promise<EmulatedWebhook> {
    const webhook = this.#registry.create(this.account.accountId, input);
    await this.#registry.handshake(webhook);
    return publicView(webhook);
  }

  /** Changes a webhook; a new URL makes it unverified and sends the handshake again. */
  async updateWebhook(
    id: string,
    change: Partial<Omit<RegisterWebhookInput, 'authMethod'>>,
  ): Promise<EmulatedWebhook> {
    return publicView(await this.#registry.update(id, change));
  }

  /** Spec 4.4: 200 when already verified; otherwise 202 and the challenge is sent again. */
  verifyWebhook(id: string): { id: string; verified: boolean; status: 200 | 202 } {
    return this.#registry.verify(id);
  }

  /** Sends the handshake now, verified or not, and resolves with what it got back. */
  async handshake(id: string): Promise<EmulatedWebhook> {
    const webhook = this.#registry.get(id);
    await this.#registry.handshake(webhook);
    return publicView(webhook);
  }

  deleteWebhook(id: string): boolean {
    return this.#registry.remove(id);
  }

  listWebhooks(): EmulatedWebhook[] {
    return this.#registry.all().map(publicView);
  }

  getWebhook(id: string): EmulatedWebhook | undefined {
    const webhook = this.#registry.find(id);
    return webhook && publicView(webhook);
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

  /**
   * Delivers an envelope as is: sending the same one twice is how the Service duplicates an event.
   * Warns through the logger when no verified webhook receives it, naming the unverified ones and why.
   */
  deliver(event: DeliveryEnvelope): EmitResult {
    const all = this.#registry.all();
    const targets = all.filter((w) => w.verified && (w.subscribedEvents as string[]).includes(event.type));
    this.#events.delete(event.id);
    this.#events.set(event.id, event);
    if (this.#events.size > KEPT_EVENTS) this.#events.delete(this.#events.keys().next().value as string);
    this.#feed.publish({ kind: 'event', event, webhookIds: targets.map((w) => w.id) });
    if (targets.length === 0) {
      const { message, meta } = unreceivedWarning(event, all);
      this.#logger.warn(meta, message);
    }
    return { event, deliveries: targets.map((webhook) => this.#scheduler.start(webhook, event)) };
  }

  /** Delivers a kept event again, as the Service's duplicates do; undefined if it is not kept. */
  resend(eventId: string): EmitResult | undefined {
    const event = this.#events.get(eventId);
    return event && this.deliver(event);
  }

  /** Resolves once every delivery matching `filter` has been acknowledged or dropped (and at least `count` exist). */
  waitForDeliveries(filter: DeliveryFilter = {}, options: WaitOptions = {}): Promise<DeliveryRecord[]> {
    return waitForDeliveries(this.deliveries, filter, options);
  }

  /** Resolves once no delivery is pending and no handshake is in flight. */
  waitForIdle(options: WaitOptions = {}): Promise<void> {
    return waitUntil(
      () => this.#scheduler.pending === 0 && this.#registry.handshakesInFlight === 0,
      options,
      () =>
        `${this.#scheduler.pending} deliveries and ${this.#registry.handshakesInFlight} handshakes pending`,
    );
  }

  /** Stops retrying, waits for attempts in flight, and closes the server. */
  async close(): Promise<void> {
    await this.#scheduler.close();
    await this.#registry.close();
    this.#feed.clear();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** The console API's view of this emulator. */
  get backend(): ConsoleBackend {
    return consoleBackend(this.account, this.#registry);
  }
}
