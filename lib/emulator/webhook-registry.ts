import { randomBytes, randomUUID } from 'node:crypto';
import { checkOptionKeys } from '../check-option-keys';
import { isEventType, type EventType } from '../events/catalogue';
import { checkWebhookUrl } from './check-webhook-url';
import type { EmulatorTls } from './emulator-tls';
import type { EmulatedWebhook, RegisterWebhookInput } from './emulator-types';
import { postHandshake } from './outbound';

export type StoredWebhook = EmulatedWebhook & { accountId: string };

/** A webhook as the emulator's callers see it: without the account it belongs to. */
export const publicView = ({ accountId: _a, ...webhook }: StoredWebhook): EmulatedWebhook => ({ ...webhook });

/** A webhook as the web console and the control API show it: without its token. */
export const withoutKey = ({
  privateKey: _p,
  ...webhook
}: EmulatedWebhook): Omit<EmulatedWebhook, 'privateKey'> => webhook;

const UPDATE_KEYS = ['name', 'url', 'subscribedEvents', 'privateKey'];
const TOKEN = /^[A-Za-z0-9\-._~+/=]{16,512}$/;

function checkEvents(types: readonly string[]): EventType[] {
  const unknown = types.filter((t) => !isEventType(t));
  if (types.length === 0 || unknown.length > 0) {
    throw new TypeError(
      `[service-webhooks] emulator: subscribedEvents must be event types of the catalogue (got ${JSON.stringify(unknown.length ? unknown : types)})`,
    );
  }
  return [...types] as EventType[];
}

function checkPrivateKey(value: unknown): string {
  if (value === undefined) return `whsk_${randomBytes(24).toString('base64url')}`;
  if (typeof value !== 'string' || !TOKEN.test(value)) {
    throw new TypeError(
      '[service-webhooks] emulator: privateKey must be 16 to 512 token characters (A-Z a-z 0-9 - . _ ~ + / =); omit it for a random one',
    );
  }
  return value;
}

/** The emulator's webhooks, their handshakes and what each last got back. */
export class WebhookRegistry {
  readonly #webhooks = new Map<string, StoredWebhook>();
  readonly #handshakes = new Set<Promise<unknown>>();

  constructor(
    private readonly attemptTimeoutMs: number,
    private readonly changed: (webhook: StoredWebhook | { deleted: string }) => void,
    private readonly tls?: EmulatorTls,
  ) {}

  get handshakesInFlight(): number {
    return this.#handshakes.size;
  }

  create(accountId: string, input: RegisterWebhookInput): StoredWebhook {
    checkOptionKeys(input, [...UPDATE_KEYS, 'authMethod'], 'emulator.registerWebhook');
    const webhook: StoredWebhook = {
      id: `wh_${randomUUID().replace(/-/g, '').slice(0, 16)}`,
      name: input.name,
      url: checkWebhookUrl(input.url),
      authMethod: input.authMethod ?? 'bearer_token',
      subscribedEvents: checkEvents(input.subscribedEvents),
      verified: false,
      privateKey: checkPrivateKey(input.privateKey),
      createdAt: new Date().toISOString(),
      lastHandshake: null,
      accountId,
    };
    this.#webhooks.set(webhook.id, webhook);
    this.changed(webhook);
    return webhook;
  }

  /** Changes a webhook, all checks first; a new URL makes it unverified and sends the handshake. */
  async update(
    id: string,
    change: Partial<Omit<RegisterWebhookInput, 'authMethod'>>,
  ): Promise<StoredWebhook> {
    const webhook = this.get(id);
    checkOptionKeys(change, UPDATE_KEYS, 'emulator.updateWebhook');
    if (change.url !== undefined) checkWebhookUrl(change.url);
    const events = change.subscribedEvents && checkEvents(change.subscribedEvents);
    const privateKey = change.privateKey === undefined ? undefined : checkPrivateKey(change.privateKey);
    if (change.name !== undefined) webhook.name = change.name;
    if (events !== undefined) webhook.subscribedEvents = events;
    if (privateKey !== undefined) webhook.privateKey = privateKey;
    this.changed(webhook);
    if (change.url !== undefined && change.url !== webhook.url) {
      webhook.url = change.url;
      webhook.verified = false;
      await this.handshake(webhook);
    }
    return webhook;
  }

  remove(id: string): boolean {
    const removed = this.#webhooks.delete(id);
    if (removed) this.changed({ deleted: id });
    return removed;
  }

  find(id: string): StoredWebhook | undefined {
    return this.#webhooks.get(id);
  }

  get(id: string): StoredWebhook {
    const webhook = this.#webhooks.get(id);
    if (webhook === undefined) throw new Error(`[service-webhooks] emulator: no webhook ${id}`);
    return webhook;
  }

  all(): StoredWebhook[] {
    return [...this.#webhooks.values()];
  }

  /** Spec 4.4: 200 when already verified; otherwise 202 and the challenge is sent again. */
  verify(id: string): { id: string; verified: boolean; status: 200 | 202 } {
    const webhook = this.get(id);
    if (webhook.verified) return { id, verified: true, status: 200 };
    void this.handshake(webhook);
    return { id, verified: false, status: 202 };
  }

  async handshake(webhook: StoredWebhook): Promise<boolean> {
    const challenge = randomBytes(18).toString('base64url');
    const url = webhook.url;
    const sent = postHandshake(webhook, challenge, this.attemptTimeoutMs, this.tls);
    this.#handshakes.add(sent);
    try {
      const record = await sent;
      // A URL changed while the handshake was out must be verified again.
      if (webhook.url === url && this.#webhooks.has(webhook.id)) {
        webhook.verified = record.verified;
        webhook.lastHandshake = record;
        this.changed(webhook);
      }
      return record.verified;
    } finally {
      this.#handshakes.delete(sent);
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#handshakes]);
  }
}
