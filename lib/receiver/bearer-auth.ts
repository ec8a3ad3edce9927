import type { RequestHandler } from 'express';
import { createTokenVerifier } from './token-verifier';
import { unauthorized } from './unauthorized';

export interface BearerAuthOptions {
  /**
   * The bearer tokens accepted on deliveries. Several may be valid at once, so a token can be
   * rotated without dropping deliveries. Required; no default.
   */
  tokens: readonly string[];
}

/**
 * Step 2: rejects a delivery without a valid `Authorization: Bearer` token with 401, before a byte of
 * its body is read.
 */
export function bearerAuth(options: BearerAuthOptions): RequestHandler {
  const verifier = createTokenVerifier(options?.tokens, 'bearerAuth');
  return function bearerAuth(req, _res, next) {
    const check = verifier.check(req.headers.authorization);
    next(check === 'valid' ? undefined : unauthorized(check));
  };
}
