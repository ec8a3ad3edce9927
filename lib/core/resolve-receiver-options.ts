import { checkOptionKeys } from '../check-option-keys';
import { DEFAULT_BODY_TIMEOUT_MS } from '../default-body-timeout';
import { EventRouter } from '../events/event-router';
import { resolveLogger, type ResolvedLogger } from '../logger';
import { OptionsError } from '../options-error';
import type { DeliveryRecord } from './delivery-record';
import { resolveDispatchOptions, type ResolvedDispatchOptions } from './dispatch/dispatch-options';
import { checkMovedOptions } from './dispatch/idempotency-settings';
import { parseLimit } from './event/parse-limit';
import type { ValidationMode } from './event/read-event';
import { RECEIVER_OPTION_KEYS, type ReceiverOptions } from './receiver-options';
import { createTokenVerifier, type TokenVerifier } from './auth/token-verifier';
import { createClientCertificateVerifier } from '../lazy-mtls';
import type { ClientCertificateVerifier } from '../mtls/mtls-options';

export interface ResolvedReceiverOptions {
  /** Undefined when only `mtls` authenticates deliveries. */
  verifier: TokenVerifier | undefined;
  certificates: ClientCertificateVerifier | undefined;
  router: EventRouter;
  limit: number;
  validation: ValidationMode;
  log: ResolvedLogger;
  requireTokenOnHandshake: boolean;
  bodyTimeoutMs: number;
  maxInFlight: number | undefined;
  onDelivery: ((record: DeliveryRecord) => unknown) | undefined;
  dispatch: ResolvedDispatchOptions;
  /** True only with an inbox: data this code cannot read goes to its dead letters. */
  quarantine: boolean;
}

export function checkValidation(validation: unknown, where: string): ValidationMode {
  if (validation === undefined) return 'strict';
  if (validation !== 'strict' && validation !== 'lenient') {
    throw new OptionsError(
      'ERR_SW_VALIDATION',
      where,
      `validation must be 'strict' or 'lenient' (got ${String(validation)})`,
    );
  }
  return validation;
}

export function checkRouter(router: unknown, where: string): EventRouter {
  if (!(router instanceof EventRouter)) {
    throw new OptionsError('ERR_SW_ROUTER', where, 'router must come from createEventRouter()');
  }
  return router;
}

function checkBoolean(value: unknown, name: string, where: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new OptionsError('ERR_SW_OPTION', where, `${name} must be a boolean`);
  return value;
}

function checkTimeout(value: unknown, name: string, fallback: number, where: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 2 ** 31 - 1) {
    throw new OptionsError(
      'ERR_SW_TIMEOUT',
      where,
      `${name} must be a positive number of milliseconds (got ${String(value)})`,
    );
  }
  return value;
}

export function checkBodyTimeout(value: unknown, where: string): number {
  return checkTimeout(value, 'bodyTimeoutMs', DEFAULT_BODY_TIMEOUT_MS, where);
}

function checkMaxInFlight(value: unknown, where: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      `maxInFlight must be a whole number ≥ 1, the deliveries handled at once (got ${String(value)}); leave it out for no bound`,
    );
  return value;
}

/** Reads every receiver option once, at construction: a misconfigured app fails at boot, not at the first delivery. */
export function resolveReceiverOptions(
  options: ReceiverOptions,
  where: string,
  extraKeys: readonly string[] = [],
): ResolvedReceiverOptions {
  if (typeof options !== 'object' || options === null) {
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      `options are required: ${where}({ bearerTokens, router })`,
    );
  }
  checkMovedOptions(options, where);
  checkOptionKeys(options, [...RECEIVER_OPTION_KEYS, ...extraKeys], where);
  // Credentials (mtls, then bearerTokens) and the logger are read before the router and the dispatch
  // options: a missing or malformed token is the mistake people make most, so its error comes first.
  const certificates =
    options.mtls === undefined ? undefined : createClientCertificateVerifier(options.mtls, where);
  const verifier =
    options.bearerTokens === undefined && certificates !== undefined
      ? undefined
      : // A token function sits before every delivery, so it is bounded by its own timeout.
        createTokenVerifier(
          options.bearerTokens,
          where,
          'bearerTokens',
          checkTimeout(options.bearerTokensTimeoutMs, 'bearerTokensTimeoutMs', 5_000, where),
        );
  const log = resolveLogger(options.logger, where);
  const router = checkRouter(options.router, where);
  if (options.onDelivery !== undefined && typeof options.onDelivery !== 'function') {
    throw new OptionsError('ERR_SW_OPTION', where, 'onDelivery must be a function (record) => void');
  }
  const dispatch = resolveDispatchOptions(options, where);
  const quarantine = checkBoolean(options.quarantine, 'quarantine', where);
  if (quarantine && dispatch.inbox === undefined)
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      "quarantine: true needs an inbox (bullmqInbox() or pgBossInbox()): a quarantined event is kept in the inbox's dead letters until replayed. Give inbox too, or leave quarantine out (an event whose data this code cannot read is then answered 400)",
    );
  return {
    verifier,
    certificates,
    router,
    log,
    limit: parseLimit(options.limit, where),
    validation: checkValidation(options.validation, where),
    requireTokenOnHandshake: checkBoolean(options.requireTokenOnHandshake, 'requireTokenOnHandshake', where),
    bodyTimeoutMs: checkBodyTimeout(options.bodyTimeoutMs, where),
    maxInFlight: checkMaxInFlight(options.maxInFlight, where),
    onDelivery: options.onDelivery,
    dispatch,
    quarantine,
  };
}
