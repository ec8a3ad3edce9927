import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { OptionsError } from '../options-error';

export type TokenCheck = 'valid' | 'missing' | 'malformed' | 'invalid';

export interface TokenVerifier {
  /** Checks an `Authorization` header value against every configured token. */
  check(authorization: string | undefined): TokenCheck;
}

const BEARER = /^Bearer +([\x21-\x7e]+) *$/i;

/**
 * Validates the tokens once and keeps only their HMACs under a per-process random key: comparing
 * fixed-size digests takes the same time whatever the token's length or content, and the tokens
 * themselves never sit in a closure an error or a heap dump could print.
 */
export function createTokenVerifier(tokens: unknown, where: string, option = 'tokens'): TokenVerifier {
  if (!Array.isArray(tokens) || tokens.length === 0) {
    throw new OptionsError('ERR_SW_TOKENS', where, `${option} must be a non-empty array of strings`);
  }
  tokens.forEach((token: unknown, index) => {
    if (typeof token !== 'string' || token.length === 0) {
      throw new OptionsError(
        'ERR_SW_TOKENS',
        where,
        `${option}[${index}] must be a non-empty string (got ${token === '' ? 'an empty string' : typeof token}); pass the webhook's bearer token, e.g. process.env.SERVICE_WEBHOOK_TOKEN`,
      );
    }
    if (!BEARER.test(`Bearer ${token}`)) {
      throw new OptionsError(
        'ERR_SW_TOKENS',
        where,
        `${option}[${index}] must be visible ASCII without spaces`,
      );
    }
  });
  const key = randomBytes(32);
  const digest = (value: string): Buffer => createHmac('sha256', key).update(value).digest();
  const expected = (tokens as string[]).map(digest);

  return {
    check(authorization) {
      if (authorization === undefined || authorization === '') return 'missing';
      const match = BEARER.exec(authorization);
      if (!match) return 'malformed';
      const presented = digest(match[1] as string);
      let ok = false;
      // No early exit: every configured token is compared, so timing does not tell which matched.
      for (const candidate of expected) ok = timingSafeEqual(candidate, presented) || ok;
      return ok ? 'valid' : 'invalid';
    },
  };
}
