import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { OptionsError } from '../options-error';

export type TokenCheck = 'valid' | 'missing' | 'malformed' | 'invalid' | 'unavailable';

/** The tokens, or a function returning the current ones (sync or async), called per request. */
export type TokenSource = readonly string[] | (() => readonly string[] | Promise<readonly string[]>);

export interface TokenVerifier {
  /** Checks an `Authorization` header value against every current token. */
  check(authorization: string | undefined): TokenCheck | Promise<TokenCheck>;
}

const BEARER = /^Bearer +([\x21-\x7e]+) *$/i;

/** Why a token list is unusable, or undefined when it is fine. */
function tokenListProblem(tokens: unknown, option: string): string | undefined {
  if (!Array.isArray(tokens) || tokens.length === 0) return `${option} must be a non-empty array of strings`;
  for (const [index, token] of (tokens as unknown[]).entries()) {
    if (typeof token !== 'string' || token.length === 0) {
      return `${option}[${index}] must be a non-empty string (got ${token === '' ? 'an empty string' : typeof token}); pass the webhook's bearer token, e.g. process.env.SERVICE_WEBHOOK_TOKEN`;
    }
    if (!BEARER.test(`Bearer ${token}`)) return `${option}[${index}] must be visible ASCII without spaces`;
  }
  return undefined;
}

/**
 * Keeps only the tokens' HMACs under a per-process random key: comparing fixed-size digests takes the
 * same time whatever the token's length or content, and the tokens never sit in a closure an error or
 * a heap dump could print. A function source is called per request; its list's digests are cached for
 * as long as it returns the same array.
 */
export function createTokenVerifier(tokens: unknown, where: string, option = 'tokens'): TokenVerifier {
  const key = randomBytes(32);
  const digest = (value: string): Buffer => createHmac('sha256', key).update(value).digest();
  const compare = (expected: readonly Buffer[], authorization: string | undefined): TokenCheck => {
    if (authorization === undefined || authorization === '') return 'missing';
    const match = BEARER.exec(authorization);
    if (!match) return 'malformed';
    const presented = digest(match[1] as string);
    let ok = false;
    // No early exit: every configured token is compared, so timing does not tell which matched.
    for (const candidate of expected) ok = timingSafeEqual(candidate, presented) || ok;
    return ok ? 'valid' : 'invalid';
  };

  if (typeof tokens !== 'function') {
    const problem = tokenListProblem(tokens, option);
    if (problem !== undefined) throw new OptionsError('ERR_SW_TOKENS', where, problem);
    const expected = (tokens as string[]).map(digest);
    return { check: (authorization) => compare(expected, authorization) };
  }

  const source = tokens as () => unknown;
  let cachedList: unknown = Symbol('no list yet');
  let cachedDigests: Buffer[] = [];
  const fromList = (list: unknown, authorization: string | undefined): TokenCheck => {
    if (list !== cachedList) {
      if (tokenListProblem(list, option) !== undefined) return 'unavailable';
      cachedList = list;
      cachedDigests = (list as string[]).map(digest);
    }
    return compare(cachedDigests, authorization);
  };
  return {
    check(authorization) {
      let list: unknown;
      try {
        list = source();
      } catch {
        return 'unavailable';
      }
      if (typeof (list as Promise<unknown> | undefined)?.then === 'function') {
        return (list as Promise<unknown>).then(
          (resolved) => fromList(resolved, authorization),
          () => 'unavailable' as const,
        );
      }
      return fromList(list, authorization);
    },
  };
}
