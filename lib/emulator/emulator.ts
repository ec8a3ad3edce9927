import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkOptionKeys } from '../check-option-keys';
import type { EventType } from '../events/catalogue';
import type { Layout } from '../events/webhook-event';
import type { ResolvedLogger } from '../logger';
import { buildCatalogueEvent, type DeliveryEnvelope } from '../events/build-event';
import { certExpiringData } from './cert-expiry';
import { ChangeFeed } from './change-feed';
import { consoleBackend, type ConsoleAccount, type ConsoleBackend } from './console-backend';
import type { ResolvedEmulatorOptions } from './emulator-options';
import { DeliveryScheduler } from './delivery-scheduler';
import type {
  AttemptRecord,
  EmitResult,
  EmulatedDelivery,
  EmulatedWebhook,
  EmulatorChange,
  RegisterWebhookInput,
} from './emulator-types';
import { unreceivedWarning } from './unreceived-warning';
import { waitForDeliveries, waitUntil, type DeliveryFilter, type WaitOptions } from './wait-until';
import { publicView, WebhookRegistry } from './webhook-registry';

/** Options of `emit`. */
export interface EmitOptions {
  /** Defaults to `'A'`. */
  layout?: Layout;
  /** The event's id. Defaults to a random UUID. */
  id?: string;
  /** The event's RFC 3339 time. Defaults to now. */
  time?: string;
}

/** The events kept for `resend` and the web console; older ones are forgotten. */
const KEPT_EVENTS = 1000;

/** A local stand-in for the Service: console API, handshakes, deliveries with retries, a web console. */
export class Emulator {
  /** Base URL of the console API, e.g. `http://127.0.0.1:53211`; the web console is at its root. */
  readonly url: string;
  /** The console API account: its id and secret key sign requests to {@link url}. */
  readonly account: ConsoleAccount;
  readonly #registry: WebhookRegistry;
  readonly #feed: ChangeFeed;
  readonly #server: http.Server;
  readonly #scheduler: DeliveryScheduler;
  readonly #options: ResolvedEmulatorOptions;
  readonly #logger: ResolvedLogger;
  readonly #events = new Map<string, DeliveryEnvelope>();

  /**
   * Use {@link createEmulator}, which starts the server this needs.
   * @internal
   */
  constructor(
    server: http.Server,
    account: ConsoleAccount,
    options: ResolvedEmulatorOptions,
    logger: ResolvedLogger,
  ) {
    this.account = account;
    this.#feed = new ChangeFeed(logger);
    this.#registry = new WebhookRegistry(
      options.attemptTimeoutMs,
      (change) => this.#feed.webhookChanged(change),
      options.tls,
    );
    this.#server = server;
    this.#options = options;
    this.#logger = logger;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    this.#scheduler = new DeliveryScheduler(options, (id) => this.#registry.find(id));
    this.#feed.follow(this.#scheduler);
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
  verifyWebhook(id: string): {
    /** The webhook's id. */
    id: string;
    /** Whether it was already verified. */
    verified: boolean;
    /** 200: already verified; 202: the challenge is being sent again. */
    status: 200 | 202;
  } {
    return this.#registry.verify(id);
  }

  /** Sends the handshake now, verified or not, and resolves with what it got back. */
  async handshake(id: string): Promise<EmulatedWebhook> {
    const webhook = this.#registry.get(id);
    await this.#registry.handshake(webhook);
    return publicView(webhook);
  }

  /** Deletes a webhook: no more deliveries go to it. False when there was none with this id. */
  deleteWebhook(id: string): boolean {
    return this.#registry.remove(id);
  }

  /** Every registered webhook, oldest first. */
  listWebhooks(): EmulatedWebhook[] {
    return this.#registry.all().map(publicView);
  }

  /** The webhook with this id, or undefined. */
  getWebhook(id: string): EmulatedWebhook | undefined {
    const webhook = this.#registry.find(id);
    return webhook && publicView(webhook);
  }

  /**
   * The console API's view of this emulator.
   * @internal
   */
  get backend(): ConsoleBackend {
    return consoleBackend(this.account, this.#registry);
  }

  /**
   * The client certificate (PEM) presented to webhooks whose `authMethod` is `'mtls'`: pin its
   * fingerprint in the receiver. Null when none was given and `@peculiar/x509` is not installed.
   */
  get clientCertificate(): string | null {
    return this.#options.tls.client?.cert ?? null;
  }

  /** Emits `ag.webhook.cert_expiring` about the client certificate now, whatever its expiry. */
  emitCertExpiring(): EmitResult {
    return this.emit('ag.webhook.cert_expiring', certExpiringData(this.#options.tls));
  }

  /** Every delivery attempt so far, in order. */
  get attempts(): readonly AttemptRecord[] {
    return this.#scheduler.attempts;
  }

  /** Every delivery (one event to one webhook) so far. */
  get deliveries(): readonly EmulatedDelivery[] {
    return this.#scheduler.deliveries;
  }

  /** Deliveries given up after the retry window. */
  get dropped(): readonly EmulatedDelivery[] {
    return this.#scheduler.deliveries.filter((d) => d.state === 'dropped');
  }

  /** The most recent events emitted or delivered (up to 1000), oldest first. */
  get events(): readonly DeliveryEnvelope[] {
    return [...this.#events.values()];
  }

  /** Builds an event and delivers it to every verified webhook subscribed to its type, and no other. */
  emit(type: EventType, data: Record<string, unknown> = {}, options: EmitOptions = {}): EmitResult {
    checkOptionKeys(options, ['layout', 'id', 'time'], 'emulator.emit');
    const event = buildCatalogueEvent(
      type,
      data,
      {
        ...options,
        origin: this.#options.origin,
        schemaBaseUrl: this.url,
      },
      'emulator.emit',
      false,
    );
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
  waitForDeliveries(filter: DeliveryFilter = {}, options: WaitOptions = {}): Promise<EmulatedDelivery[]> {
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
}
