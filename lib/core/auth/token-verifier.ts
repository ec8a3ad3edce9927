import { nodeCrypto } from '../../lazy-crypto';
import { OptionsError } from '../../options-error';
import { withTimeout } from '../../with-timeout';

export type TokenCheck = 'valid' | 'missing' | 'malformed' | 'invalid' | 'unavailable';

/** The tokens, or a function returning the current ones (sync or async), called per request. */
export type TokenSource = readonly string[] | (() => readonly string[] | Promise<readonly string[]>);

export interface TokenVerifier {
  /** Checks an `Authorization` header value against every current token. */
  check(authorization: string | undefined): TokenCheck | Promise<TokenCheck>;
}

/**
 * Where the token of `Bearer <token>` begins: after the scheme in any case and one or more spaces; -1
 * when the value does not begin so. With {@link tokenEnd} and {@link spacesOnly}, the value is read
 * by character codes as `/^Bearer +([\x21-\x7e]+) *$/i` reads it (a test holds the two together),
 * with no match array and no substring a request.
 */
function tokenStart(authorization: string): number {
  // `| 0x20` folds an ASCII capital onto its small letter and turns nothing else into one of these.
  if (
    (authorization.charCodeAt(0) | 0x20) !== 0x62 ||
    (authorization.charCodeAt(1) | 0x20) !== 0x65 ||
    (authorization.charCodeAt(2) | 0x20) !== 0x61 ||
    (authorization.charCodeAt(3) | 0x20) !== 0x72 ||
    (authorization.charCodeAt(4) | 0x20) !== 0x65 ||
    (authorization.charCodeAt(5) | 0x20) !== 0x72 ||
    authorization.charCodeAt(6) !== 0x20
  )
    return -1;
  let i = 7;
  while (authorization.charCodeAt(i) === 0x20) i++;
  return i;
}

/** Whether only spaces follow `from`. */
function spacesOnly(authorization: string, from: number): boolean {
  for (let i = from; i < authorization.length; i++) if (authorization.charCodeAt(i) !== 0x20) return false;
  return true;
}

/** The end of the run of visible ASCII (`!` to `~`) that begins at `start`. */
function tokenEnd(authorization: string, start: number): number {
  let i = start;
  for (; i < authorization.length; i++) {
    const c = authorization.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) break;
  }
  return i;
}

const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
/** By default, a token source slower than this counts as unavailable (503, retried): none waits forever. */
const SOURCE_TIMEOUT_MS = 5_000;
/** The longest token accepted; the pad (and the widest comparison) is this many bytes. */
const MAX_TOKEN = 512;
/**
 * Tokens are compared over a fixed width: the longest configured token's length rounded up to a
 * multiple of this, so the time taken depends on neither the presented token nor which one matched,
 * only (to this granularity) on the longest one configured.
 */
const WIDTH_STEP = 64;
/** A per-process random pad: tokens are kept XORed with it, never as a string an error or a heap dump shows. */
let PAD: Buffer | undefined;
let scratch: Buffer | undefined;
/** Drawn when the first verifier is built, not at load: node:crypto costs a cold start 4 ms. */
function pad(): Buffer {
  PAD ??= nodeCrypto().randomBytes(MAX_TOKEN);
  return PAD;
}

interface MaskedToken {
  bytes: Buffer;
  length: number;
}

/** A token list as compared: each token masked over the list's width. */
interface MaskedList {
  width: number;
  tokens: MaskedToken[];
  /** The first `width` bytes of the shared scratch buffer, where the presented token is masked. */
  work: Buffer;
}

function maskList(tokens: readonly string[], work: Buffer): MaskedList {
  let longest = 0;
  for (const token of tokens) longest = Math.max(longest, token.length);
  const width = Math.min(MAX_TOKEN, Math.ceil(longest / WIDTH_STEP) * WIDTH_STEP);
  const padBytes = pad();
  const masked = tokens.map((token) => {
    const bytes = Buffer.from(padBytes.subarray(0, width));
    for (let i = 0; i < token.length; i++) bytes[i] = (bytes[i] as number) ^ token.charCodeAt(i);
    return { bytes, length: token.length };
  });
  return { width, tokens: masked, work: work.subarray(0, width) };
}

/** Why a token list is unusable, or undefined when it is fine. */
function tokenListProblem(tokens: unknown, option: string): string | undefined {
  if (!Array.isArray(tokens) || tokens.length === 0) return `${option} must be a non-empty array of strings`;
  for (const [index, token] of (tokens as unknown[]).entries()) {
    if (typeof token !== 'string' || token.length === 0) {
      return `${option}[${index}] must be a non-empty string (got ${token === '' ? 'an empty string' : typeof token}); pass the webhook's bearer token, e.g. process.env.SERVICE_WEBHOOK_TOKEN`;
    }
    if (!VISIBLE_ASCII.test(token)) return `${option}[${index}] must be visible ASCII without spaces`;
    if (token.length > MAX_TOKEN) return `${option}[${index}] must be at most ${MAX_TOKEN} characters`;
  }
  return undefined;
}

/**
 * Keeps the tokens only XORed with a per-process random pad, in fixed-size buffers (the longest
 * token's length rounded up to a multiple of 64): the comparison takes the same time whatever the
 * presented token's length or content and whichever token it matches, costs no hash per request, and
 * the tokens never sit in a closure as strings an error or a heap dump could print. A presented token
 * longer than that width is longer than every token, and refused without a comparison. A function
 * source is called per request; its list is masked again (its width too) only when it changes.
 */
export function createTokenVerifier(
  tokens: unknown,
  where: string,
  option = 'tokens',
  sourceTimeoutMs = SOURCE_TIMEOUT_MS,
): TokenVerifier {
  const padBytes = pad();
  scratch ??= Buffer.from(padBytes);
  const work = scratch;
  const { timingSafeEqual } = nodeCrypto();
  const compare = (expected: MaskedList, authorization: string | undefined): TokenCheck => {
    if (authorization === undefined || authorization === '') return 'missing';
    const start = tokenStart(authorization);
    if (start < 0) return 'malformed';
    const end = tokenEnd(authorization, start);
    if (end === start || !spacesOnly(authorization, end)) return 'malformed';
    const length = end - start;
    // Longer than every configured token: says only that, not which token it is not.
    if (length > expected.width) return 'invalid';
    const { work } = expected;
    // Visible ASCII only (tokenStart says so): one char is one byte. `work` holds the pad between
    // calls, so only the presented token's bytes are masked here and put back after, not the width.
    for (let i = 0; i < length; i++) work[i] = (padBytes[i] as number) ^ authorization.charCodeAt(start + i);
    let ok = false;
    // No early exit: every configured token is compared, so timing does not tell which matched.
    for (const candidate of expected.tokens) {
      const same = timingSafeEqual(candidate.bytes, work);
      ok = (same && candidate.length === length) || ok;
    }
    for (let i = 0; i < length; i++) work[i] = padBytes[i] as number;
    return ok ? 'valid' : 'invalid';
  };

  if (typeof tokens !== 'function') {
    const problem = tokenListProblem(tokens, option);
    if (problem !== undefined) throw new OptionsError('ERR_SW_TOKENS', where, problem);
    const expected = maskList(tokens as string[], work);
    return { check: (authorization) => compare(expected, authorization) };
  }

  const source = tokens as () => unknown;
  // A copy of the list last masked: an app that updates its cached array in place (a revoked or
  // rotated token) is seen at the next request, not only when it returns a new array.
  let cachedCopy: string[] | undefined;
  let cachedMasks: MaskedList | undefined;
  const unchanged = (list: readonly string[]) =>
    cachedCopy !== undefined &&
    list.length === cachedCopy.length &&
    list.every((t, i) => t === cachedCopy?.[i]);
  const fromList = (list: unknown, authorization: string | undefined): TokenCheck => {
    if (!Array.isArray(list) || !unchanged(list as string[])) {
      if (tokenListProblem(list, option) !== undefined) return 'unavailable';
      cachedCopy = [...(list as string[])];
      cachedMasks = maskList(cachedCopy, work);
    }
    return compare(cachedMasks as MaskedList, authorization);
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
        return withTimeout(list as Promise<unknown>, sourceTimeoutMs, option).then(
          (resolved) => fromList(resolved, authorization),
          () => 'unavailable' as const,
        );
      }
      return fromList(list, authorization);
    },
  };
}
