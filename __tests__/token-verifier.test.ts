import fc from 'fast-check';
import { OptionsError } from '../lib';
import { createTokenVerifier } from '../lib/core/auth/token-verifier';
import { nodeCrypto } from '../lib/lazy-crypto';

/** The byte lengths of each `timingSafeEqual` call `check` makes (the verifier is built inside `run`). */
function comparedWidths(run: () => void): number[] {
  const spy = jest.spyOn(nodeCrypto(), 'timingSafeEqual');
  try {
    run();
    return spy.mock.calls.map(([a, b]) => {
      expect((a as Uint8Array).byteLength).toBe((b as Uint8Array).byteLength);
      return (a as Uint8Array).byteLength;
    });
  } finally {
    spy.mockRestore();
  }
}

describe('createTokenVerifier', () => {
  const verifier = createTokenVerifier(['tok_alpha', 'x'.repeat(512)], 'test');

  it.each([
    ['the first token', 'Bearer tok_alpha', 'valid'],
    ['the second, at the longest allowed', `Bearer ${'x'.repeat(512)}`, 'valid'],
    ['any case of the scheme, trailing spaces', 'bearer   tok_alpha  ', 'valid'],
    ['a prefix of a token', 'Bearer tok_alph', 'invalid'],
    ['a token with more after it', 'Bearer tok_alpha2', 'invalid'],
    ['one character off', 'Bearer tok_alphb', 'invalid'],
    ['longer than any token can be', `Bearer ${'x'.repeat(513)}`, 'invalid'],
    ['the pad itself (all zero bytes after XOR) as a guess', 'Bearer !', 'invalid'],
    ['no header', undefined, 'missing'],
    ['an empty header', '', 'missing'],
    ['another scheme', 'Basic dG9rX2FscGhh', 'malformed'],
    ['a token with a space', 'Bearer tok alpha', 'malformed'],
  ])('%s → %s', (_name, header, expected) => {
    expect(verifier.check(header)).toBe(expected);
  });

  it.each([
    ['a tab before the token', 'Bearer\ttok_alpha', 'malformed'],
    ['no space after the scheme', 'Bearertok_alpha', 'malformed'],
    ['the scheme alone', 'Bearer', 'malformed'],
    ['the scheme and spaces only', 'Bearer   ', 'malformed'],
    ['a scheme one letter off', 'Bearar tok_alpha', 'malformed'],
    ['a non-ASCII letter folding to the scheme', 'Bearer\u0130 tok_alpha', 'malformed'],
    ['a tab after the token', 'Bearer tok_alpha\t', 'malformed'],
    ['a non-ASCII character in the token', 'Bearer tok_alph\u00e1', 'malformed'],
    ['mixed case of the scheme', 'bEaReR tok_alpha', 'valid'],
  ])('%s → %s', (_name, header, expected) => {
    expect(verifier.check(header)).toBe(expected);
  });

  it('reads the header as /^Bearer +([\x21-\x7e]+) *$/i does, for values near one (seed 20261126)', () => {
    const BEARER = /^Bearer +([\x21-\x7e]+) *$/i;
    const tokens = ['tok_alpha', 'b'];
    const check = createTokenVerifier(tokens, 'test').check;
    const expected = (header: string) => {
      if (header === '') return 'missing';
      const token = BEARER.exec(header)?.[1];
      if (token === undefined) return 'malformed';
      return tokens.includes(token) ? 'valid' : 'invalid';
    };
    const near = fc.constantFrom(...'BbEeAaRr tok_alph\t\u0000\u007f\u00a0\u0130~!');
    const header = fc.oneof(
      fc
        .tuple(
          fc.constantFrom('Bearer', 'bearer', 'BEARER', 'Bearer ', 'Beare', 'Bear\u0000r', ''),
          fc.string({ unit: near, maxLength: 4 }),
          fc.constantFrom('', ' ', '  ', '\t'),
          fc.constantFrom('tok_alpha', 'b', 'tok', ''),
          fc.string({ unit: near, maxLength: 3 }),
        )
        .map((parts) => parts.join('')),
      fc.string({ unit: near, maxLength: 20 }),
    );
    fc.assert(
      fc.property(header, (value) => {
        expect(check(value)).toBe(expected(value));
      }),
      { seed: 20261126, numRuns: 5000 },
    );
  });

  it.each([
    ['an empty list', []],
    ['a token over 512 characters', ['y'.repeat(513)]],
    ['a token with a space', ['a b']],
    ['a token with a trailing space (it could never match)', ['tok ']],
    ['a non-string', [42]],
  ])('refuses %s at construction', (_name, tokens) => {
    expect(() => createTokenVerifier(tokens, 'test')).toThrow(OptionsError);
  });

  describe('compares over the longest token rounded up to 64 bytes, every token each time', () => {
    // 10 and 70 characters: the width is 128.
    const short = 's'.repeat(10);
    const long = 'l'.repeat(70);
    it.each([
      ['the short token', short, 'valid', [128, 128]],
      ['the long token', long, 'valid', [128, 128]],
      ['a wrong token as wide as the width', 'w'.repeat(128), 'invalid', [128, 128]],
      ['a token one byte past the width, refused uncompared', 'w'.repeat(129), 'invalid', []],
      ['the long token with one byte more', `${long}x`, 'invalid', [128, 128]],
    ])('%s', (_name, presented, expected, widths) => {
      let check: string | Promise<string> = '';
      const compared = comparedWidths(() => {
        check = createTokenVerifier([short, long], 'test').check(`Bearer ${presented}`);
      });
      expect(check).toBe(expected);
      expect(compared).toEqual(widths);
    });

    it('a list of tokens up to 64 characters compares 64 bytes; the widest, 512', () => {
      expect(
        comparedWidths(() => createTokenVerifier(['a'.repeat(64), 'b'], 'test').check('Bearer b')),
      ).toEqual([64, 64]);
      expect(
        comparedWidths(() =>
          createTokenVerifier(['a'.repeat(449)], 'test').check(`Bearer ${'a'.repeat(449)}`),
        ),
      ).toEqual([512]);
    });

    it('a function source takes the new width when its list changes', () => {
      let list = ['f'.repeat(20)];
      const spy = jest.spyOn(nodeCrypto(), 'timingSafeEqual');
      try {
        const verifier = createTokenVerifier(() => list, 'test');
        const widths = (presented: string, expected: string) => {
          spy.mockClear();
          expect(verifier.check(`Bearer ${presented}`)).toBe(expected);
          return spy.mock.calls.map(([a]) => (a as Uint8Array).byteLength);
        };
        expect(widths('g'.repeat(100), 'invalid')).toEqual([]);
        list = ['f'.repeat(20), 'g'.repeat(100)];
        expect(widths('g'.repeat(100), 'valid')).toEqual([128, 128]);
        list = ['f'.repeat(20)];
        expect(widths('f'.repeat(20), 'valid')).toEqual([64]);
        expect(widths('g'.repeat(100), 'invalid')).toEqual([]);
      } finally {
        spy.mockRestore();
      }
    });
  });

  it('keeps no token as a string in what it returns', () => {
    const seen = JSON.stringify(verifier) + String(verifier.check);
    expect(seen).not.toContain('tok_alpha');
  });
});
