import { execFileSync } from 'node:child_process';
import { signPayload, verifyPayloadSignature } from '../lib/console';
import { describeWithServer, findBinary } from './support/server-binary';

const SECRET = 'sk_test_4f9a2c';
const CREATE =
  '{"name":"Front door","url":"https://example.com/hook","auth_method":"bearer_token","subscribed_events":["ag.access_pass.issued"]}';

/** Computed with: printf '%s' "$payload" | base64 -w0 | openssl dgst -sha256 -hmac "$secret" */
const VECTORS: [string, string][] = [
  ['{}', 'ff187d62ee12d3f181f8d4ca2d6b5a78f6fd0ea5238c1d3c3a276f04783b009a'],
  [CREATE, '0f44f02e38d642cc1c957b28878143443a4ecf30cf6bd5d45553afac49c65d25'],
];

describe('signPayload', () => {
  it.each(VECTORS)('matches the openssl vector for %s', (payload, expected) => {
    expect(signPayload(payload, SECRET)).toBe(expected);
  });

  it('signs an empty payload as {}', () => {
    expect(signPayload('', SECRET)).toBe(VECTORS[0]?.[1]);
  });

  it.each([
    ['the right signature', VECTORS[0]?.[1], true],
    ['uppercase hex', VECTORS[0]?.[1].toUpperCase(), false],
    ['a signature of other bytes', signPayload('{ }', SECRET), false],
    ['a truncated signature', VECTORS[0]?.[1].slice(0, 63), false],
    ['nothing', undefined, false],
  ])('verifyPayloadSignature with %s', (_name, signature, ok) => {
    expect(verifyPayloadSignature('{}', SECRET, signature)).toBe(ok);
  });
});

// Without openssl (or base64) the suite is skipped with one line, and the fixed vectors above still
// hold; with CI=true it runs, and a missing tool fails it.
const openssl = findBinary('openssl', ['/usr/bin', '/usr/local/bin']);
const base64 = findBinary('base64', ['/usr/bin', '/bin']);
describeWithServer(
  openssl !== undefined && base64 !== undefined,
  'openssl or base64',
  'install them (Debian: apt-get install openssl coreutils) or run CI=true to make this a failure',
)('signPayload against the openssl CLI', () => {
  it('matches openssl run now, on a payload long enough that base64 would wrap at 76 columns', () => {
    const payload = JSON.stringify({ name: 'x'.repeat(200), subscribed_events: ['ag.hid_org.created'] });
    const encoded = execFileSync(base64 ?? 'base64', ['-w0'], { input: payload, encoding: 'utf8' });
    const expected = execFileSync(openssl ?? 'openssl', ['dgst', '-sha256', '-hmac', SECRET, '-r'], {
      input: encoded,
      encoding: 'utf8',
    }).split(' ')[0];
    expect(signPayload(payload, SECRET)).toBe(expected);
  });
});
