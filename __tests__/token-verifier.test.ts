import { OptionsError } from '../lib';
import { createTokenVerifier } from '../lib/core/auth/token-verifier';

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
    ['an empty list', []],
    ['a token over 512 characters', ['y'.repeat(513)]],
    ['a token with a space', ['a b']],
    ['a token with a trailing space (it could never match)', ['tok ']],
    ['a non-string', [42]],
  ])('refuses %s at construction', (_name, tokens) => {
    expect(() => createTokenVerifier(tokens, 'test')).toThrow(OptionsError);
  });

  it('keeps no token as a string in what it returns', () => {
    const seen = JSON.stringify(verifier) + String(verifier.check);
    expect(seen).not.toContain('tok_alpha');
  });
});
