import type { EventType } from '../events/catalogue';

/** How the Service authenticates deliveries to a webhook: a bearer token, or its TLS client certificate. */
export type AuthMethod = 'bearer_token' | 'mtls';

/** A webhook record (spec 2.5). Fields the spec does not show are optional. */
export interface ConsoleWebhook {
  /** The webhook's id, for `verifyWebhook`, `deleteWebhook` and `waitUntilVerified`. */
  id: string;
  /** The name it was registered with. */
  name: string;
  /** Whether its receiver echoed the handshake: only verified webhooks get deliveries. */
  verified: boolean;
  /** Where deliveries go, when the Service says. */
  url?: string;
  /** How deliveries authenticate, when the Service says; a value it adds later passes through. */
  authMethod?: AuthMethod | (string & {});
  /** The event types it is subscribed to, when the Service says. */
  subscribedEvents?: string[];
}

/** The answer to `createWebhook`: the webhook and, only this once, its secret. */
export interface CreatedWebhook extends ConsoleWebhook {
  /** The webhook's secret, its delivery bearer token. Store it: the list never shows it again. */
  privateKey: string;
}

/** What `createWebhook` registers; checked before anything is sent. */
export interface CreateWebhookInput {
  /** A name of your choice, not empty. */
  name: string;
  /** Where deliveries go: https, or plain http only to localhost. */
  url: string;
  /** Defaults to `'bearer_token'`. */
  authMethod?: AuthMethod;
  /** The event types to deliver, at least one, each from the catalogue. */
  subscribedEvents: readonly EventType[];
}

/** Shown by the compiler when a page is looped over as if it were the array of webhooks. */
export type NotAnArray =
  'one page, not an array: loop over page.webhooks, or over client.iterateWebhooks() for every page';

/**
 * One page of the list. Not iterable: `for (const w of page)` is a compile error whose type names
 * `page.webhooks` and `iterateWebhooks()` (the type parameter exists only to say so).
 */
export interface WebhookPage<_Hint extends NotAnArray = NotAnArray> {
  /** The webhooks of this page. */
  webhooks: ConsoleWebhook[];
  /** This page's number, from 1. */
  page: number;
  /** The page size asked for (or the one the Service used, when it says). */
  perPage: number;
  /** From the response when it says; null when it does not. */
  totalCount: number | null;
  /** How many pages there are, when the response says; null when it does not. */
  totalPages: number | null;
  /** Whether another page may follow. */
  hasMore: boolean;
}

type Wire = Record<string, unknown>;

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const num = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? value : null;

/** The one place snake_case on the wire becomes camelCase in TypeScript, and back. */
export function webhookFromWire(wire: Wire): ConsoleWebhook {
  const webhook: ConsoleWebhook = {
    id: String(wire.id),
    name: String(wire.name ?? ''),
    verified: wire.verified === true,
  };
  const url = str(wire.url);
  const authMethod = str(wire.auth_method);
  if (url !== undefined) webhook.url = url;
  if (authMethod !== undefined) webhook.authMethod = authMethod;
  if (Array.isArray(wire.subscribed_events)) webhook.subscribedEvents = wire.subscribed_events.map(String);
  return webhook;
}

export function createInputToWire(input: CreateWebhookInput): Wire {
  return {
    name: input.name,
    url: input.url,
    auth_method: input.authMethod ?? 'bearer_token',
    subscribed_events: [...input.subscribedEvents],
  };
}

/**
 * The list envelope is "not shown" in the spec, so it is read tolerantly: a bare array, or an object
 * holding the array under `webhooks` or `data`, with pagination fields (`page`, `per_page`,
 * `total_count` or `total`, `total_pages`) at the top or under `pagination`/`meta` when present.
 * Without them, a full page means another may follow.
 */
export function pageFromWire(body: unknown, page: number, perPage: number): WebhookPage | null {
  const holder = Array.isArray(body) ? null : (body as Wire | null);
  const items = Array.isArray(body) ? body : (holder?.webhooks ?? holder?.data);
  if (!Array.isArray(items)) return null;
  const meta = (holder?.pagination ?? holder?.meta ?? holder ?? {}) as Wire;
  const totalCount = num(meta.total_count) ?? num(meta.total);
  const totalPages = num(meta.total_pages) ?? (totalCount === null ? null : Math.ceil(totalCount / perPage));
  return {
    webhooks: items.map((item) => webhookFromWire(item as Wire)),
    page: num(meta.page) ?? page,
    perPage: num(meta.per_page) ?? perPage,
    totalCount,
    totalPages,
    hasMore: totalPages === null ? items.length >= perPage : page < totalPages,
  };
}
