import type { ExpressMiddleware } from './express-types';
import { checkOptionKeys } from '../../check-option-keys';
import { createTokenVerifier, type TokenCheck, type TokenSource } from '../../core/auth/token-verifier';
import { unauthorized } from '../../core/problems';
import { authorizationOf } from './express-request';

/** Options of {@link bearerAuth}. */
export interface BearerAuthOptions {
  /**
   * The bearer tokens accepted on deliveries, or a function returning the current ones (sync or
   * async, called per request: cache in it). Several may be valid at once, so a token can be
   * rotated without dropping deliveries. Required; no default.
   */
  tokens: TokenSource;
}

/**
 * Step 2: rejects a delivery without a valid `Authorization: Bearer` token with 401, before a byte of
 * its body is read.
 */
export function bearerAuth(options: BearerAuthOptions): ExpressMiddleware {
  checkOptionKeys(options ?? {}, ['tokens'], 'bearerAuth');
  const verifier = createTokenVerifier(options?.tokens, 'bearerAuth');
  return function bearerAuth(req, _res, next) {
    const pass = (check: TokenCheck) => next(check === 'valid' ? undefined : unauthorized(check));
    const check = verifier.check(authorizationOf(req));
    if (typeof check === 'string') pass(check);
    else check.then(pass, next);
  };
}
