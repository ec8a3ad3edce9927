import { nodeCrypto } from '../lazy-crypto';

/** How long a page's token lets its forms act: a tab left open over a working day still works. */
export const TOKEN_LIFETIME_MS = 12 * 60 * 60 * 1000;

/**
 * Per-page tokens for the console's actions: each page is given a fresh one, bound to who it was
 * shown to and signed with a key made when the console was, so none is stored, a page of another
 * identity or another console (or from before a restart) cannot act, and a cross-site form, which
 * cannot read the page, has none.
 */
export class ActionTokens {
  readonly #key = nodeCrypto().randomBytes(32);

  #sign(issuedAt: string, identity: string): Buffer {
    return nodeCrypto().createHmac('sha256', this.#key).update(`${issuedAt}\n${identity}`).digest();
  }

  issue(identity: string, now = Date.now()): string {
    const issuedAt = String(now);
    return `${issuedAt}.${this.#sign(issuedAt, identity).toString('base64url')}`;
  }

  /** Whether `token` was issued by this console to `identity` within the lifetime, compared in constant time. */
  verify(token: string | undefined, identity: string, now = Date.now()): boolean {
    if (token === undefined) return false;
    const [issuedAt, mac, extra] = token.split('.');
    if (issuedAt === undefined || mac === undefined || extra !== undefined || !/^\d{1,15}$/.test(issuedAt))
      return false;
    const age = now - Number(issuedAt);
    if (age < 0 || age > TOKEN_LIFETIME_MS) return false;
    const given = Buffer.from(mac, 'base64url');
    const expected = this.#sign(issuedAt, identity);
    return given.length === expected.length && nodeCrypto().timingSafeEqual(given, expected);
  }
}
