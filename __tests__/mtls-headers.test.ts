import fc from 'fast-check';
import { createClientCertificateVerifier, type CertificateSource, type MtlsOptions } from '../lib/mtls';
import { parseXfcc, readXfcc } from '../lib/mtls/read-xfcc';
import {
  acceptedReply,
  derBase64,
  fingerprintOf,
  mtlsFixtures,
  type MtlsFixtures,
} from './support/mtls-fixtures';
import { request, startHttpVerifierServer } from './support/mtls-server';

let f: MtlsFixtures;
beforeAll(async () => {
  f = await mtlsFixtures();
});

/** Sends `headers` over loopback to a plain HTTP server (as behind a proxy) checking with `options`. */
async function send(options: MtlsOptions, headers: Record<string, string | string[]>) {
  const server = await startHttpVerifierServer(createClientCertificateVerifier(options, 'test'));
  try {
    return await request(server.url, { headers });
  } finally {
    await server.close();
  }
}

const pinned = (from: CertificateSource): MtlsOptions => ({
  from,
  fingerprints: [fingerprintOf(f.certs.client.cert)],
});
const hashOf = (pem: string) => fingerprintOf(pem).replace(/:/g, '').toLowerCase();
/** nginx's $ssl_client_escaped_cert escapes like encodeURIComponent, "+ / =" included. */
const nginxEscaped = (pem: string) => encodeURIComponent(pem);
/** AWS ALB URL-encodes the PEM but leaves "+ = /" as they are. */
const albEncoded = (pem: string) =>
  encodeURIComponent(pem).replace(/%2B/g, '+').replace(/%3D/g, '=').replace(/%2F/g, '/');
const xfcc = (pem: string, extra = '') =>
  `By=spiffe://proxy.test;Hash=${hashOf(pem)};Cert="${encodeURIComponent(pem)}";Subject="CN=service-webhooks test client";DNS=webhooks.test-client.invalid${extra}`;

describe('client certificate from a trusted proxy header', () => {
  const accepted: [string, CertificateSource, () => Record<string, string>][] = [
    [
      'an Envoy XFCC element',
      'x-forwarded-client-cert',
      () => ({ 'x-forwarded-client-cert': xfcc(f.certs.client.cert) }),
    ],
    [
      'an RFC 9440 Client-Cert',
      'client-cert',
      () => ({ 'client-cert': `:${derBase64(f.certs.client.cert)}:` }),
    ],
    [
      'an nginx escaped certificate verified by nginx',
      'nginx',
      () => ({ 'x-ssl-client-cert': nginxEscaped(f.certs.client.cert), 'x-ssl-client-verify': 'SUCCESS' }),
    ],
    [
      'an AWS ALB passthrough chain, "+=/" unescaped',
      'aws-alb',
      () => ({ 'x-amzn-mtls-clientcert': albEncoded(f.certs.client.cert + f.certs.ca.cert) }),
    ],
    [
      'an AWS ALB verify-mode leaf',
      'aws-alb',
      () => ({ 'x-amzn-mtls-clientcert-leaf': albEncoded(f.certs.client.cert) }),
    ],
  ];
  it.each(accepted)('accepts %s', async (_name, from, headers) => {
    const reply = await send(pinned(from), headers());
    expect(reply).toEqual(acceptedReply(f.certs.client.cert));
  });

  it('reads an ALB header whose base64 holds "+" without turning it into a space', () => {
    // The certificates are random: this guards the test above, which is only meaningful with a "+".
    const encoded = [f.certs.client.cert, f.certs.ca.cert].map(albEncoded).join('');
    expect(encoded).toMatch(/\+/);
  });

  it.each([
    [
      'XFCC',
      'x-forwarded-client-cert' as const,
      () => ({
        'x-forwarded-client-cert': `Hash=${hashOf(f.certs.client.cert)};Cert="${encodeURIComponent(f.certs.client.cert)}";Chain="${encodeURIComponent(f.certs.client.cert + f.certs.ca.cert)}"`,
      }),
    ],
    [
      'Client-Cert-Chain',
      'client-cert' as const,
      () => ({
        'client-cert': `:${derBase64(f.certs.client.cert)}:`,
        'client-cert-chain': `:${derBase64(f.certs.ca.cert)}:`,
      }),
    ],
  ])('checks the CA with the chain %s carries', async (_name, from, headers) => {
    expect((await send({ from, ca: f.certs.ca.cert }, headers())).status).toBe(200);
    const stranger = await send({ from, ca: (await mtlsFixtures()).certs.ca.cert }, headers());
    expect(stranger.body).toMatchObject({ status: 403, slug: 'untrusted-client-certificate' });
  });

  const refused: [string, CertificateSource, () => Record<string, string>, number, string][] = [
    ['no XFCC header', 'x-forwarded-client-cert', () => ({}), 401, 'missing-client-certificate'],
    [
      'a forged XFCC element on the right',
      'x-forwarded-client-cert',
      () => ({ 'x-forwarded-client-cert': `${xfcc(f.certs.client.cert)},${xfcc(f.stranger.cert)}` }),
      403,
      'unreadable-client-certificate',
    ],
    [
      // Only a client writes a second element: Envoy writes one, and the Service sends none.
      'the pinned XFCC element after a forged one (issue 28)',
      'x-forwarded-client-cert',
      () => ({ 'x-forwarded-client-cert': `${xfcc(f.stranger.cert)},${xfcc(f.certs.client.cert)}` }),
      403,
      'unreadable-client-certificate',
    ],
    [
      'an XFCC Hash that is not its Cert',
      'x-forwarded-client-cert',
      () => ({
        'x-forwarded-client-cert': `Hash=${hashOf(f.stranger.cert)};Cert="${encodeURIComponent(f.certs.client.cert)}"`,
      }),
      403,
      'unreadable-client-certificate',
    ],
    [
      'an XFCC element without Cert',
      'x-forwarded-client-cert',
      () => ({ 'x-forwarded-client-cert': `Hash=${hashOf(f.certs.client.cert)}` }),
      403,
      'unreadable-client-certificate',
    ],
    [
      'an XFCC quote left open',
      'x-forwarded-client-cert',
      () => ({ 'x-forwarded-client-cert': `Cert="${encodeURIComponent(f.certs.client.cert)}` }),
      403,
      'unreadable-client-certificate',
    ],
    [
      'an XFCC Cert that is not URL-encoded',
      'x-forwarded-client-cert',
      () => ({ 'x-forwarded-client-cert': 'Cert="%E0%A4%A"' }),
      403,
      'unreadable-client-certificate',
    ],
    ['no Client-Cert', 'client-cert', () => ({}), 401, 'missing-client-certificate'],
    [
      'a Client-Cert that is not a byte sequence',
      'client-cert',
      () => ({ 'client-cert': derBase64(f.certs.client.cert) }),
      403,
      'unreadable-client-certificate',
    ],
    [
      'a Client-Cert that is not DER',
      'client-cert',
      () => ({ 'client-cert': ':aGVsbG8=:' }),
      403,
      'unreadable-client-certificate',
    ],
    [
      'a Client-Cert-Chain item that is not a byte sequence',
      'client-cert',
      () => ({ 'client-cert': `:${derBase64(f.certs.client.cert)}:`, 'client-cert-chain': 'oops' }),
      403,
      'unreadable-client-certificate',
    ],
    [
      'an expired Client-Cert',
      'client-cert',
      () => ({ 'client-cert': `:${derBase64(f.expired.cert)}:` }),
      403,
      'client-certificate-expired',
    ],
    [
      'no nginx header',
      'nginx',
      () => ({ 'x-ssl-client-verify': 'NONE' }),
      401,
      'missing-client-certificate',
    ],
    [
      'nginx verification FAILED',
      'nginx',
      () => ({
        'x-ssl-client-cert': nginxEscaped(f.certs.client.cert),
        'x-ssl-client-verify': 'FAILED:certificate has expired',
      }),
      403,
      'unverified-client-certificate',
    ],
    [
      'an nginx certificate without X-SSL-Client-Verify',
      'nginx',
      () => ({ 'x-ssl-client-cert': nginxEscaped(f.certs.client.cert) }),
      403,
      'unverified-client-certificate',
    ],
    [
      'an nginx header that is not a PEM',
      'nginx',
      () => ({ 'x-ssl-client-cert': 'hello', 'x-ssl-client-verify': 'SUCCESS' }),
      403,
      'unreadable-client-certificate',
    ],
    [
      'a stranger through nginx',
      'nginx',
      () => ({ 'x-ssl-client-cert': nginxEscaped(f.stranger.cert), 'x-ssl-client-verify': 'SUCCESS' }),
      403,
      'client-certificate-not-pinned',
    ],
    ['no ALB header', 'aws-alb', () => ({}), 401, 'missing-client-certificate'],
    [
      // Verify mode: the ALB verified the client's own leaf; the client added a passthrough chain
      // holding the pinned certificate, which must not be read.
      'a forged ALB passthrough chain beside a verified leaf',
      'aws-alb',
      () => ({
        'x-amzn-mtls-clientcert': albEncoded(f.certs.client.cert),
        'x-amzn-mtls-clientcert-leaf': albEncoded(f.stranger.cert),
      }),
      403,
      'ambiguous-client-certificate',
    ],
    [
      'a verified ALB leaf beside a passthrough chain',
      'aws-alb',
      () => ({
        'x-amzn-mtls-clientcert': albEncoded(f.stranger.cert),
        'x-amzn-mtls-clientcert-leaf': albEncoded(f.certs.client.cert),
      }),
      403,
      'ambiguous-client-certificate',
    ],
    [
      'a header over 32 KiB',
      'aws-alb',
      () => ({ 'x-amzn-mtls-clientcert': 'A'.repeat(33 * 1024) }),
      403,
      'unreadable-client-certificate',
    ],
    [
      'more than 8 certificates',
      'aws-alb',
      () => ({ 'x-amzn-mtls-clientcert': albEncoded(f.certs.client.cert.repeat(9)) }),
      403,
      'unreadable-client-certificate',
    ],
  ];
  it.each(refused)('refuses %s', async (_name, from, headers, status, slug) => {
    const reply = await send(pinned(from), headers());
    expect(reply.status).toBe(status);
    expect(reply.body).toMatchObject({ ok: false, status, slug });
    expect(JSON.stringify(reply.body)).not.toMatch(/-----BEGIN|MII/);
  });

  it('answers each certificate for itself when one verifier reads many', async () => {
    const server = await startHttpVerifierServer(createClientCertificateVerifier(pinned('nginx'), 'test'));
    try {
      const statuses = [];
      for (const pem of [f.certs.client.cert, f.stranger.cert, f.certs.client.cert, f.next.cert]) {
        const headers = { 'x-ssl-client-cert': nginxEscaped(pem), 'x-ssl-client-verify': 'SUCCESS' };
        statuses.push((await request(server.url, { headers })).status);
      }
      const failed = {
        'x-ssl-client-cert': nginxEscaped(f.certs.client.cert),
        'x-ssl-client-verify': 'FAILED:revoked',
      };
      statuses.push((await request(server.url, { headers: failed })).status);
      expect(statuses).toEqual([200, 403, 200, 403, 403]);
    } finally {
      await server.close();
    }
  });

  const foreign: [CertificateSource, string][] = [
    ['x-forwarded-client-cert', 'client-cert'],
    ['x-forwarded-client-cert', 'x-ssl-client-cert'],
    ['client-cert', 'x-forwarded-client-cert'],
    ['nginx', 'x-amzn-mtls-clientcert'],
    ['aws-alb', 'x-ssl-client-verify'],
  ];
  it.each(foreign)('reading %s, refuses a request that also carries %s', async (from, name) => {
    const good = Object.fromEntries(
      accepted
        .filter(([, source]) => source === from)
        .slice(0, 1)
        .flatMap(([, , h]) => Object.entries(h())),
    );
    const reply = await send(pinned(from), { ...good, [name]: 'anything' });
    expect(reply.body).toMatchObject({ ok: false, status: 403, slug: 'untrusted-certificate-header' });
  });
});

describe('parseXfcc', () => {
  it.each([
    ['one element', 'By=spiffe://a;Hash=ab;URI=', [{ by: 'spiffe://a', hash: 'ab', uri: '' }]],
    [
      'quoted values holding , ; = and escaped quotes',
      'Subject="CN=x, O=\\"y;z\\"";DNS=a',
      [{ subject: 'CN=x, O="y;z"', dns: 'a' }],
    ],
    [
      'elements in order, keys in any case',
      'hash=1,HASH=2;Cert="c"',
      [{ hash: '1' }, { hash: '2', cert: 'c' }],
    ],
    ['a second header line joined with ", "', 'Hash=1, Hash=2', [{ hash: '1' }, { hash: '2' }]],
    [
      "OpenSSL's escaped backslash before the closing quote",
      'Subject="CN=a\\\\";URI=',
      [{ subject: 'CN=a\\', uri: '' }],
    ],
    [
      'repeated SAN keys (the first kept)',
      'By=a;URI=u1;URI=u2;DNS=d1;DNS=d2',
      [{ by: 'a', uri: 'u1', dns: 'd1' }],
    ],
  ])('reads %s', (_name, value, elements) => {
    expect(parseXfcc(value).map((element) => Object.fromEntries(element))).toEqual(elements);
  });

  it.each([
    ['a pair without "="', 'Hash'],
    ['an unclosed quote', 'Cert="abc'],
    ['a quote closed before more value', 'Cert="abc"def'],
    ['a quote in an unquoted value', 'DNS=ab"c'],
    ['a quote in an unquoted By', 'By=spiffe://a"b;Hash=1'],
    ['an "=" in an unquoted value', 'URI=a=b'],
    ['a key Envoy never writes', 'Hash=1;X=2'],
    ['an unquoted Cert (Envoy quotes Cert, Chain and Subject)', 'Hash=1;Cert=abc'],
    ['an unquoted Subject', 'Subject=CN'],
    ['a quoted DNS (Envoy never quotes By, Hash, URI or DNS)', 'DNS="a,b"'],
    ['a quoted Hash', 'Hash="1"'],
    ['a backslash escaping the closing quote', 'Subject="CN=a\\"'],
    ['a duplicate key', 'Hash=1;Cert="c";hash=2'],
    ['a duplicate Cert', 'Cert="a";Cert="b"'],
    ['an empty element', 'Hash=1,,Hash=2'],
    ['a trailing ";"', 'Hash=1;'],
    ['a trailing ","', 'Hash=1,'],
    ['a key that is not a word', 'Ha sh=1'],
    ['the smuggle: an open quote swallowing the next element', 'Hash=1;Cert="a";X=",By=b;Hash=2;Cert="real"'],
  ])('refuses %s', (_name, value) => {
    expect(() => parseXfcc(value)).toThrow();
  });
});

describe("XFCC quote smuggling (a client's open quote against a proxy that appends)", () => {
  /** What the client sends: the Service's certificate in an element whose last quote stays open. */
  const forged = () =>
    `Hash=${hashOf(f.certs.client.cert)};Cert="${encodeURIComponent(f.certs.client.cert)}";X="`;
  const options: [string, () => MtlsOptions][] = [
    ['a fingerprint pin', () => pinned('x-forwarded-client-cert')],
    [
      'ca and subjects',
      () => ({
        from: 'x-forwarded-client-cert',
        ca: f.certs.ca.cert,
        subjects: [/CN=service-webhooks test client/],
      }),
    ],
  ];
  it.each(options)(
    'refuses, with %s, the forged element Envoy appended to (APPEND_FORWARD)',
    async (_name, opts) => {
      const reply = await send(opts(), { 'x-forwarded-client-cert': `${forged()},${xfcc(f.next.cert)}` });
      expect(reply.body).toMatchObject({ ok: false, status: 403, slug: 'unreadable-client-certificate' });
    },
  );

  it.each(options)(
    'refuses, with %s, the forged line beside a second line the proxy added',
    async (_name, opts) => {
      const reply = await send(opts(), { 'x-forwarded-client-cert': [forged(), xfcc(f.next.cert)] });
      expect(reply.body).toMatchObject({ ok: false, status: 403, slug: 'unreadable-client-certificate' });
    },
  );

  it("refuses the proxy's element after a well-formed forged one, or after a second line (issue 28)", async () => {
    const client = xfcc(f.certs.client.cert);
    for (const header of [`${xfcc(f.next.cert)},${client}`, [xfcc(f.next.cert), client]]) {
      const reply = await send(pinned('x-forwarded-client-cert'), { 'x-forwarded-client-cert': header });
      expect(reply.body).toMatchObject({
        ok: false,
        status: 403,
        slug: 'unreadable-client-certificate',
        // What to do, in words: the proxy's setting that writes one element.
        detail: expect.stringMatching(
          /holds 2 elements.*forward_client_cert_details: SANITIZE_SET/,
        ) as unknown,
      });
    }
  });

  const SEED = Number(process.env.PROPERTY_SEED ?? 20261124);
  const RUNS = Number(process.env.PROPERTY_RUNS ?? 2000);
  it(`no client prefix, whatever its bytes, reaches into the proxy's element, and none is accepted (seed ${SEED})`, () => {
    const proxy = xfcc(f.next.cert);
    const proxyPairs = Object.fromEntries(parseXfcc(proxy)[0] as Map<string, string>);
    const service = encodeURIComponent(f.certs.client.cert);
    const pieces = ['"', '\\', '\\"', ',', ', ', ';', '=', ' ', 'X', 'Cert=', 'Hash=', service];
    // The client's own elements: pairs that parse, among them the Service's certificate with its Hash.
    const pair = fc.oneof(
      fc.constant(`Hash=${hashOf(f.certs.client.cert)}`),
      fc.constant(`Cert="${service}"`),
      fc
        .tuple(fc.constantFrom('By', 'Subject', 'URI', 'DNS', 'X'), fc.string({ maxLength: 8 }))
        .map(([key, value]) => `${key}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`),
    );
    const elements = fc
      .array(
        fc.array(pair, { minLength: 1, maxLength: 4 }).map((pairs) => pairs.join(';')),
        { maxLength: 3 },
      )
      .map((list) => list.join(','));
    // Then whatever bytes the client likes: an open quote, a stray backslash, random text.
    const tail = fc.oneof(
      fc.constantFrom('', ';X="', '"', ';X="\\', ';X=', ','),
      fc.array(fc.constantFrom(...pieces), { maxLength: 8 }).map((parts) => parts.join('')),
      fc.string({ unit: 'binary', maxLength: 40 }),
    );
    const prefix = fc.tuple(elements, tail).map(([head, rest]) => head + rest);
    let parsed = 0;
    fc.assert(
      fc.property(prefix, fc.constantFrom(',', ', '), (client, join) => {
        const header = `${client}${join}${proxy}`;
        // The grammar: whatever the client wrote, the last element parsed is the proxy's, or nothing parses.
        let last: Map<string, string> | undefined;
        try {
          last = parseXfcc(header).at(-1);
        } catch {
          last = undefined;
        }
        if (last !== undefined) {
          parsed++;
          expect(Object.fromEntries(last)).toEqual(proxyPairs);
        }
        // The reader: a header with the client's bytes before the proxy's element is never accepted.
        const presented = readXfcc((name) => (name === 'x-forwarded-client-cert' ? header : undefined));
        expect(presented.kind).toBe('refused');
      }),
      { seed: SEED, numRuns: RUNS },
    );
    console.log(
      `XFCC prefix property (seed ${SEED}, ${RUNS} runs): ${parsed} parsed with the proxy's element last, ${RUNS - parsed} did not parse, all refused`,
    );
  });
});
