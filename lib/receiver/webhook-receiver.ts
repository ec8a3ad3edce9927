import { Router } from 'express';
import type { EventRouter } from '../events/event-router';
import type { IdempotencyStore } from '../idempotency/idempotency-store';
import { resolveLogger, type Logger } from '../logger';
import { OptionsError } from '../options-error';
import { createTokenVerifier } from './token-verifier';
import { bearerAuth } from './bearer-auth';
import { challengeHandshake } from './challenge-handshake';
import { dispatchEvent } from './dispatch-event';
import { postOnly } from './method-not-allowed';
import { problemHandler } from './problem-handler';
import { readCloudEvent, type ValidationMode } from './read-cloud-event';

export interface WebhookReceiverOptions {
  /** Bearer tokens accepted on deliveries (several during a rotation). Required. */
  bearerTokens: readonly string[];
  /** The handlers, from `createEventRouter()`. Required. */
  router: EventRouter;
  /** Largest body accepted, in bytes or as `'1mb'`. Defaults to `'1mb'`. */
  limit?: number | string;
  /** Handler time before a 503 (the Service retries). Defaults to `10_000` ms. */
  timeoutMs?: number;
  /** `'strict'` (400 on a broken per-type rule) or `'lenient'` (accept and log). Defaults to `'strict'`. */
  validation?: ValidationMode;
  /** Any subset of `{ debug, info, warn, error }` (console and pino fit), or `false`. Defaults to the console. */
  logger?: Logger | false;
  /** Where processed events are remembered, or `false`. Defaults to a new `MemoryStore`. */
  idempotency?: IdempotencyStore | false;
  /** Scopes idempotency keys when receivers share a store. Defaults to `''`. */
  name?: string;
  /** Require a valid bearer token on the handshake too. Defaults to `false`. */
  requireTokenOnHandshake?: boolean;
  /** How long a processed event is remembered. Defaults to 7 hours. */
  retentionMs?: number;
  /** Seconds sent in `Retry-After` on 409 and 503. Defaults to `30`. */
  retryAfterSeconds?: number;
  /** How long a claim holds an event while its handlers run. Defaults to `max(5 × timeoutMs, 60_000)` ms. */
  leaseMs?: number;
}

/** The composed receiver: an Express router with a way to wait for running handlers. */
export type WebhookReceiver = Router & {
  /** Resolves once every handler started so far has settled; call it on shutdown. */
  drain(): Promise<void>;
};

/**
 * The whole pipeline as one Express router: POST only, handshake, bearer auth, bounded CloudEvent
 * read and dispatch, with every failure answered as problem+json. Mount it with `app.use(path, …)`.
 */
export function webhookReceiver(options: WebhookReceiverOptions): WebhookReceiver {
  if (typeof options !== 'object' || options === null) {
    throw new OptionsError(
      'ERR_SW_OPTION',
      'webhookReceiver',
      'options are required: webhookReceiver({ bearerTokens, router })',
    );
  }
  const { bearerTokens: tokens, logger } = options;
  // Checked here first so the errors name this factory and its own options.
  createTokenVerifier(tokens, 'webhookReceiver', 'bearerTokens');
  resolveLogger(logger, 'webhookReceiver');
  const dispatch = dispatchEvent(options.router, {
    timeoutMs: options.timeoutMs,
    idempotency: options.idempotency,
    name: options.name,
    leaseMs: options.leaseMs,
    retentionMs: options.retentionMs,
    retryAfterSeconds: options.retryAfterSeconds,
    logger,
  });
  const router = Router() as WebhookReceiver;
  router.use(
    postOnly(),
    challengeHandshake({ tokens, requireToken: options.requireTokenOnHandshake ?? false }),
    bearerAuth({ tokens }),
    readCloudEvent({ limit: options.limit, validation: options.validation, logger }),
    dispatch,
  );
  router.use(problemHandler({ logger }));
  router.drain = dispatch.drain;
  return router;
}
