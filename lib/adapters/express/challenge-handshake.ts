import type { ExpressMiddleware } from './express-types';
import { checkOptionKeys } from '../../check-option-keys';
import { answerHandshake } from '../../core/auth/handshake';
import { rateLimitedLog } from '../../rate-limited-log';
import { checkBodyTimeout } from '../../core/resolve-receiver-options';
import { createTokenVerifier, type TokenSource, type TokenVerifier } from '../../core/auth/token-verifier';
import { resolveLogger, type Logger } from '../../logger';
import { OptionsError } from '../../options-error';
import { expressRequest, sendAnswer } from './express-request';

export { CHALLENGE_HEADER } from '../../core/auth/handshake';

/** Options of {@link challengeHandshake}. */
export interface ChallengeHandshakeOptions {
  /**
   * Tokens a handshake's `Authorization: Bearer` header is checked against when it carries one (the
   * same tokens as `bearerAuth`). Without them a handshake's `Authorization` header is not checked.
   * Defaults to none.
   */
  tokens?: TokenSource;
  /**
   * Refuse a handshake without a valid bearer token. The spec does not say the Service sends one on
   * the handshake, so this is off unless you know it does. Requires `tokens`. Defaults to `false`.
   */
  requireToken?: boolean;
  /** How long the handshake body may take to arrive before a 408. Defaults to `10_000` ms. */
  bodyTimeoutMs?: number;
  /** Where refused handshakes are reported. Defaults to the console. */
  logger?: Logger | false;
}

const KEYS = ['tokens', 'requireToken', 'bodyTimeoutMs', 'logger'];

/**
 * Step 1: answers the Service's verification handshake by echoing its challenge; every other request
 * passes on untouched.
 */
export function challengeHandshake(options: ChallengeHandshakeOptions = {}): ExpressMiddleware {
  checkOptionKeys(options, KEYS, 'challengeHandshake');
  const requireToken = options.requireToken ?? false;
  if (typeof requireToken !== 'boolean') {
    throw new OptionsError('ERR_SW_OPTION', 'challengeHandshake', 'requireToken must be a boolean');
  }
  const verifier: TokenVerifier | undefined =
    options.tokens === undefined ? undefined : createTokenVerifier(options.tokens, 'challengeHandshake');
  if (requireToken && verifier === undefined) {
    throw new OptionsError(
      'ERR_SW_TOKENS',
      'challengeHandshake',
      'requireToken: true needs tokens to check against; pass the same tokens as bearerAuth',
    );
  }
  const settings = {
    verifier,
    requireToken,
    bodyTimeoutMs: checkBodyTimeout(options.bodyTimeoutMs, 'challengeHandshake'),
    warn: rateLimitedLog(resolveLogger(options.logger, 'challengeHandshake')),
  };

  return function challengeHandshake(req, res, next) {
    const echo = answerHandshake(expressRequest(req), settings);
    if (echo === undefined) return next();
    echo.then((answer) => sendAnswer(res, answer), next);
  };
}
