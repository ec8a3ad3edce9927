import type { EventRouter } from '../events/event-router';
import type { Logger } from '../logger';
import type { DeliveryListener } from './delivery-record';
import { DISPATCH_OPTION_KEYS, type DispatchEventOptions } from './dispatch/dispatch-options';
import type { ValidationMode } from './event/read-event';
import type { TokenSource } from './auth/token-verifier';
import type { MtlsOptions } from '../mtls/mtls-options';

/** The options every door of the receiver takes: Express, node:http and Fetch alike. */
export interface ReceiverOptions extends DispatchEventOptions {
  /**
   * Bearer tokens accepted on deliveries (several during a rotation), or a function returning the
   * current ones, sync or async: it is called on every request, so cache in it. Required unless
   * `mtls` is given; with both, a delivery needs both.
   */
  bearerTokens?: TokenSource;
  /**
   * The bound on a `bearerTokens` function (a secrets manager, say): one that has not settled by then
   * counts as failed, and the delivery is answered 503 + `Retry-After`. Defaults to `5_000` ms.
   */
  bearerTokensTimeoutMs?: number;
  /**
   * Client-certificate authentication, for webhooks created with `auth_method: 'mtls'`: where the
   * certificate comes from (the TLS socket by default, or a trusted proxy's header) and what it must
   * match. Checked before the handshake and every delivery. Defaults to none (bearer tokens only).
   */
  mtls?: MtlsOptions;
  /** The handlers, from `createEventRouter()`. Required. */
  router: EventRouter;
  /** Largest body accepted, in bytes or as `'512kb'`, `'1mb'` (units b, kb, mb, gb). Defaults to `'1mb'`. */
  limit?: number | string;
  /** `'strict'` (400 on a broken per-type rule) or `'lenient'` (accept and log). Defaults to `'strict'`. */
  validation?: ValidationMode;
  /**
   * With an `inbox`: an authenticated, well-formed CloudEvent whose data this code cannot read (a
   * field of the wrong type, a missing required one, a broken per-type rule under `'strict'`) is not
   * refused but kept as a dead letter (`reason: 'invalid'`, with the field and what was expected),
   * running no handler, before it is answered `200 {"status":"quarantined"}` (the inbox's
   * `quarantine()`). A replay after an upgrade that reads it runs it.
   * Bad tokens, bad JSON, non-CloudEvents and oversized bodies are still refused. Without an inbox it
   * throws at construction. Defaults to `false`: such an event is answered 400.
   */
  quarantine?: boolean;
  /** Any subset of `{ debug, info, warn, error }` (console and pino fit), or `false`. Defaults to the console. */
  logger?: Logger | false | undefined;
  /** Require a valid bearer token on the handshake too. Defaults to `false`. */
  requireTokenOnHandshake?: boolean;
  /** How long a request body may take to arrive before a 408. Defaults to `10_000` ms. */
  bodyTimeoutMs?: number;
  /**
   * At most this many deliveries at once: one more is answered `503` + `Retry-After` after its
   * token is checked and before its body is read (the Service retries it, so nothing is lost), and
   * a burst no longer opens as many database connections as there are requests. Logged at most once
   * a minute; its record says `shed: 'in-flight'`. Handshakes are never shed. A whole number ≥ 1.
   * Defaults to none (no bound).
   */
  maxInFlight?: number;
  /**
   * Called once per request, after its answer was sent, with what became of it. It cannot delay or
   * change the answer; what it throws is logged (rate-limited). Its optional `onRequestStart` is
   * called as each request enters (`prometheusMetrics()` counts requests in flight with it). Defaults
   * to none.
   */
  onDelivery?: DeliveryListener;
}

export const RECEIVER_OPTION_KEYS: readonly string[] = [
  'bearerTokens',
  'bearerTokensTimeoutMs',
  'mtls',
  'router',
  'limit',
  'validation',
  'quarantine',
  'requireTokenOnHandshake',
  'bodyTimeoutMs',
  'maxInFlight',
  'onDelivery',
  ...DISPATCH_OPTION_KEYS,
];
