import express from 'express';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  clientCertificateAuth,
  createEventRouter,
  createFetchHandler,
  createNodeHandler,
  OptionsError,
  problemHandler,
  webhookReceiver,
  type CertificateSource,
  type ReceiverOptions,
} from 'service-webhooks';
import { buildEvent, DELIVERY_HEADERS, type TestCertificate } from 'service-webhooks/testing';
import { captureLogger } from './support/capture-logger';
import { DOORS } from './support/doors';
import { ALL_DETAILS, envoyXfcc, NEEDED_DETAILS, type EnvoyPeer } from './support/envoy-xfcc';
import { fingerprintOf, mtlsFixtures, type MtlsFixtures } from './support/mtls-fixtures';
import { opensslLeaf } from './support/openssl-leaf';
import { describeWithServer, findBinary } from './support/server-binary';

let f: MtlsFixtures;
beforeAll(async () => {
  f = await mtlsFixtures();
});

interface Sent {
  status: number;
  type: string;
  body: Record<string, unknown>;
}

/** POSTs over mutual TLS, presenting `client` when given; 5 s at most. */
function post(
  url: string,
  client: TestCertificate | null,
  body: unknown,
  headers: Record<string, string> = {},
) {
  return new Promise<Sent>((resolve, reject) => {
    const req = https.request(url, {
      method: 'POST',
      ca: f.certs.ca.cert,
      ...(client ?? {}),
      agent: false,
      timeout: 5000,
      headers: { ...DELIVERY_HEADERS, ...headers },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          type: String(res.headers['content-type']),
          body: JSON.parse(text) as Record<string, unknown>,
        }),
      );
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** An HTTPS server asking for client certificates (refusing none itself) around `listener`. */
async function serve(listener: Parameters<typeof https.createServer>[1]) {
  const server = https.createServer(
    {
      requestCert: true,
      rejectUnauthorized: false,
      ca: f.certs.ca.cert,
      cert: f.certs.server.cert,
      key: f.certs.server.key,
    },
    listener,
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

function receiverOptions(extra: Partial<ReceiverOptions> = {}) {
  const handled: string[] = [];
  const logger = captureLogger();
  const router = createEventRouter().on('ag.access_pass.issued', (event) => void handled.push(event.id));
  const options = { router, logger, mtls: { fingerprints: [fingerprintOf(f.certs.client.cert)] }, ...extra };
  return { handled, logger, options };
}

const doors = [
  [
    'webhookReceiver (Express)',
    (options: ReceiverOptions) => express().use('/hooks', webhookReceiver(options)),
  ],
  [
    'createNodeHandler (node:http)',
    (options: ReceiverOptions) => createNodeHandler({ ...options, path: '/hooks' }),
  ],
] as const;

describe.each(doors)('mtls through %s', (_door, door) => {
  it('acknowledges a delivery presenting the pinned certificate, without a bearer token', async () => {
    const { handled, options } = receiverOptions();
    const server = await serve(door(options));
    try {
      const event = buildEvent('ag.access_pass.issued');
      const sent = await post(server.url, f.certs.client, event);
      expect(sent).toMatchObject({ status: 200, body: { id: event.id, status: 'processed' } });
      expect(handled).toEqual([event.id]);
    } finally {
      await server.close();
    }
  });

  it.each([
    ['no certificate', () => null, 401, 'missing-client-certificate'],
    ['a certificate that is not pinned', () => f.next, 403, 'client-certificate-not-pinned'],
    ['an expired certificate', () => f.expired, 403, 'client-certificate-expired'],
  ])('refuses a delivery with %s and does not acknowledge it', async (_name, client, status, slug) => {
    const { handled, logger, options } = receiverOptions();
    const server = await serve(door(options));
    try {
      const cert = client();
      const sent = await post(server.url, cert, buildEvent('ag.access_pass.issued'));
      expect(sent.status).toBe(status);
      expect(sent.type).toMatch(/^application\/problem\+json/);
      expect(sent.body).toMatchObject({ status, type: `urn:service-webhooks:problem:${slug}` });
      expect(handled).toEqual([]);
      await post(server.url, cert, buildEvent('ag.access_pass.issued'));
      // Logged once per reason however many arrive, with the certificate's identity and never its body.
      const lines = logger.records.filter((r) => r.meta.reason === slug);
      expect(lines).toHaveLength(1);
      if (cert !== null) {
        expect(sent.body.detail).toContain(fingerprintOf(cert.cert));
        expect(lines[0]?.meta).toMatchObject({
          fingerprint: fingerprintOf(cert.cert),
          subject: expect.stringMatching(/^CN=/),
        });
      }
      expect(JSON.stringify(logger.records) + JSON.stringify(sent.body)).not.toMatch(/BEGIN CERTIFICATE|MII/);
    } finally {
      await server.close();
    }
  });

  it('checks the handshake over the same mutual TLS', async () => {
    const { options } = receiverOptions();
    const server = await serve(door(options));
    try {
      const handshake = { 'X-Service-Webhook-Challenge': 'abc123', 'Content-Type': 'application/json' };
      expect((await post(server.url, f.certs.client, { challenge: 'abc123' }, handshake)).body).toEqual({
        challenge: 'abc123',
      });
      expect((await post(server.url, null, { challenge: 'abc123' }, handshake)).status).toBe(401);
      expect((await post(server.url, f.stranger, { challenge: 'abc123' }, handshake)).status).toBe(403);
    } finally {
      await server.close();
    }
  });

  it('requires both the token and the certificate when given both', async () => {
    const { handled, options } = receiverOptions({ bearerTokens: ['t0ken'] });
    const server = await serve(door(options));
    try {
      const token = { Authorization: 'Bearer t0ken' };
      expect(
        (await post(server.url, f.certs.client, buildEvent('ag.access_pass.issued'))).body,
      ).toMatchObject({ type: 'urn:service-webhooks:problem:missing-token' });
      expect((await post(server.url, null, buildEvent('ag.access_pass.issued'), token)).status).toBe(401);
      expect(handled).toEqual([]);
      expect(
        (await post(server.url, f.certs.client, buildEvent('ag.access_pass.issued'), token)).status,
      ).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('mtls through createFetchHandler', () => {
  it('reads the certificate from a proxy header, as a Fetch handler has no socket', async () => {
    const { handled, options } = receiverOptions({ mtls: { from: 'client-cert', ca: f.certs.ca.cert } });
    const handler = createFetchHandler(options);
    const event = buildEvent('ag.access_pass.issued');
    const der = (pem: string) =>
      `:${Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64').toString('base64')}:`;
    const send = (headers: Record<string, string>) =>
      handler(
        new Request('https://example.test/hooks', {
          method: 'POST',
          headers: { ...DELIVERY_HEADERS, ...headers },
          body: JSON.stringify(event),
        }),
      );
    expect((await send({})).status).toBe(401);
    expect((await send({ 'client-cert': der(f.stranger.cert) })).status).toBe(403);
    expect((await send({ 'x-forwarded-client-cert': 'Hash=00' })).status).toBe(403);
    expect(handled).toEqual([]);
    const ok = await send({ 'client-cert': der(f.certs.client.cert) });
    expect(ok.status).toBe(200);
    expect(handled).toEqual([event.id]);
  });

  it('refuses mtls from the socket at construction', () => {
    expect(() => createFetchHandler({ router: createEventRouter(), mtls: { ca: f.certs.ca.cert } })).toThrow(
      /createFetchHandler: mtls.from must name the header your TLS-terminating proxy sets/,
    );
  });
});

describe('mtls options of the receivers', () => {
  it.each([
    ['webhookReceiver', () => webhookReceiver({ router: createEventRouter(), mtls: {} })],
    [
      'createNodeHandler',
      () => createNodeHandler({ router: createEventRouter(), mtls: { fingerprints: ['nope'] } }),
    ],
    [
      'createFetchHandler',
      () =>
        createFetchHandler({ router: createEventRouter(), mtls: { from: 'nginx', subject: ['x'] } as never }),
    ],
  ])('%s rejects bad mtls options at construction', (where, build) => {
    expect(build).toThrow(OptionsError);
    expect(build).toThrow(new RegExp(`^\\[service-webhooks\\] ${where}`));
  });

  it('still asks for bearerTokens when mtls is not given', () => {
    expect(() => webhookReceiver({ router: createEventRouter() } as ReceiverOptions)).toThrow(
      /bearerTokens must be a non-empty array/,
    );
  });
});

describe('clientCertificateAuth (the Express step)', () => {
  it('passes an allowed certificate on, and gives problemHandler a 401 or 403 otherwise', async () => {
    const app = express()
      .post(
        '/hooks',
        clientCertificateAuth({ ca: f.certs.ca.cert, subjects: [/test client$/] }),
        (_req, res) => res.json({ passed: true }),
      )
      .use(problemHandler({ logger: false }));
    const server = await serve(app);
    try {
      expect((await post(server.url, f.certs.client, {})).body).toEqual({ passed: true });
      expect((await post(server.url, null, {})).status).toBe(401);
      const stranger = await post(server.url, f.stranger, {});
      expect(stranger).toMatchObject({
        status: 403,
        body: { type: 'urn:service-webhooks:problem:untrusted-client-certificate' },
      });
      expect(() => clientCertificateAuth({ from: 'socket' })).toThrow(
        /clientCertificateAuth: mtls needs at least one of/,
      );
    } finally {
      await server.close();
    }
  });
});

describe('forged proxy headers through every door (XFCC smuggling, ALB passthrough beside a verified leaf)', () => {
  const hash = (pem: string) => fingerprintOf(pem).replace(/:/g, '').toLowerCase();
  /** The element Envoy appends for the certificate it verified. */
  const envoy = (pem: string) =>
    `By=spiffe://proxy.test;Hash=${hash(pem)};Cert="${encodeURIComponent(pem)}";Subject="CN=proxied"`;
  /** A client's own element holding the Service's certificate, its last quote left open. */
  const smuggled = () =>
    `Hash=${hash(f.certs.client.cert)};Cert="${encodeURIComponent(f.certs.client.cert)}";X="`;
  const alb = (pem: string) =>
    encodeURIComponent(pem).replace(/%2B/g, '+').replace(/%3D/g, '=').replace(/%2F/g, '/');
  const xfcc = (value: () => string) => () => ({ 'x-forwarded-client-cert': value() });
  const rows: [string, CertificateSource, number, () => Record<string, string>][] = [
    [
      "an open quote swallowing Envoy's element",
      'x-forwarded-client-cert',
      403,
      xfcc(() => `${smuggled()},${envoy(f.stranger.cert)}`),
    ],
    [
      'the same sent as two header lines, joined',
      'x-forwarded-client-cert',
      403,
      xfcc(() => `${smuggled()}, ${envoy(f.stranger.cert)}`),
    ],
    [
      "the proxy's element after a forged one (one element only since issue 28)",
      'x-forwarded-client-cert',
      403,
      xfcc(() => `${envoy(f.stranger.cert)},${envoy(f.certs.client.cert)}`),
    ],
    [
      'a forged ALB passthrough beside a verified leaf',
      'aws-alb',
      403,
      () => ({
        'x-amzn-mtls-clientcert': alb(f.certs.client.cert),
        'x-amzn-mtls-clientcert-leaf': alb(f.stranger.cert),
      }),
    ],
  ];
  describe.each(DOORS.map((door) => [door.name, door] as const))('%s', (_name, door) => {
    it.each(rows)('%s (%s) → %d', async (_row, from, status, headers) => {
      const { handled, options } = receiverOptions({
        mtls: { from, fingerprints: [fingerprintOf(f.certs.client.cert)] },
      });
      const open = await door.open(options);
      try {
        const event = buildEvent('ag.access_pass.issued');
        const answer = await open.send({
          headers: { ...DELIVERY_HEADERS, ...headers() },
          body: JSON.stringify(event),
        });
        expect(answer.status).toBe(status);
        // A refusal is never an acknowledgement: no handler ran.
        expect(handled).toEqual(status === 200 ? [event.id] : []);
      } finally {
        await open.close();
      }
    });
  });
});

const openssl = findBinary('openssl', ['/usr/bin', '/usr/local/bin']);
const describeWithOpenssl = describeWithServer(
  openssl !== undefined,
  'openssl',
  'install it (Debian: apt-get install openssl) or run CI=true to make this a failure',
);

describeWithOpenssl(
  "XFCC as Envoy writes it: a client certificate's SANs cannot add an element (issue 28)",
  () => {
    const hash = (pem: string) => fingerprintOf(pem).replace(/:/g, '').toLowerCase();
    /** The Service's certificate as Envoy would describe it, for a hostile SAN to carry. */
    const service = (quoted: boolean) => {
      const cert = encodeURIComponent(f.certs.client.cert);
      return `Hash=${hash(f.certs.client.cert)};Cert=${quoted ? `"${cert}"` : cert}`;
    };
    const serviceFingerprint = () => fingerprintOf(f.certs.client.cert);
    const servicePeer = (): EnvoyPeer => ({
      cert: f.certs.client.cert,
      chain: f.certs.client.cert + f.certs.ca.cert,
      dns: ['webhooks.test-client.invalid'],
    });
    const leaves = new Map<string, EnvoyPeer>();
    /** A leaf from a CA Envoy trusts (here the Service's own CA, as a shared mesh CA), with `names`. */
    const hostile = (names: { commonName?: string; dns?: string[]; uri?: string[] }): EnvoyPeer => {
      const key = JSON.stringify(names);
      const made = leaves.get(key);
      if (made !== undefined) return made;
      const leaf = opensslLeaf(openssl as string, f.certs.ca, { commonName: 'tenant workload', ...names });
      // The SANs reached the certificate byte for byte (Node writes a value holding "," as a JSON string).
      const written = new X509Certificate(leaf.cert).subjectAltName ?? '';
      const quoted = [...written.matchAll(/"(?:[^"\\]|\\.)*"/g)].map((m) => JSON.parse(m[0]) as string);
      for (const value of [...(names.dns ?? []), ...(names.uri ?? [])]) {
        expect(quoted.includes(value) || written.split(', ').some((san) => san.endsWith(`:${value}`))).toBe(
          true,
        );
      }
      const peer = { cert: leaf.cert, chain: leaf.cert + f.certs.ca.cert, ...names };
      leaves.set(key, peer);
      return peer;
    };
    const pinned = () => ({ fingerprints: [serviceFingerprint()] });
    const byCa = () => ({ ca: f.certs.ca.cert, subjects: [/tenant workload/] });

    const rows: [
      string,
      number,
      () => { fingerprints: string[] } | { ca: string; subjects: RegExp[] },
      () => string,
    ][] = [
      [
        "the Service's certificate, the fields the receiver needs",
        200,
        pinned,
        () => envoyXfcc(servicePeer(), NEEDED_DETAILS),
      ],
      [
        "the Service's certificate, every field Envoy writes",
        200,
        pinned,
        () => envoyXfcc(servicePeer(), ALL_DETAILS),
      ],
      [
        'a DNS SAN holding ",Hash=…;Cert=…" (the Service\'s, unquoted)',
        403,
        pinned,
        () => envoyXfcc(hostile({ dns: [`x,${service(false)}`] }), ALL_DETAILS),
      ],
      [
        `a DNS SAN holding ",Hash=…;Cert="…"" (the Service's, quoted)`,
        403,
        pinned,
        () => envoyXfcc(hostile({ dns: [`x,${service(true)}`] }), ALL_DETAILS),
      ],
      [
        'a URI SAN holding ",Hash=…;Cert=…", DNS pairs following it',
        403,
        pinned,
        () =>
          envoyXfcc(
            hostile({ uri: [`spiffe://tenant/x,${service(false)}`], dns: ['a.tenant.test'] }),
            ALL_DETAILS,
          ),
      ],
      [
        `a URI SAN holding ",Hash=…;Cert="…"" with no DNS asked for`,
        403,
        pinned,
        () =>
          envoyXfcc(hostile({ uri: [`spiffe://tenant/x,${service(true)}`] }), { ...ALL_DETAILS, dns: false }),
      ],
      [
        'a DNS SAN holding ";" that reads as one more pair of the element',
        403,
        byCa,
        () => envoyXfcc(hostile({ dns: ['a.tenant.test;URI=spiffe://service.test'] }), ALL_DETAILS),
      ],
      // Envoy writes no URI= or DNS= pair under the recommended config: such names cannot reach the header.
      ...(
        [
          ['a query', 'https://webhooks.service.example/client?env=prod'],
          ['matrix parameters', 'https://webhooks.service.example/client;v=1'],
        ] as const
      ).flatMap(([what, uri]): (typeof rows)[number][] => [
        [
          `a URI SAN holding ${what}, under the recommended config (no URI= pair)`,
          200,
          byCa,
          () => envoyXfcc(hostile({ uri: [uri] }), NEEDED_DETAILS),
        ],
        [
          `a URI SAN holding ${what}, written as a URI= pair`,
          403,
          byCa,
          () => envoyXfcc(hostile({ uri: [uri] }), ALL_DETAILS),
        ],
      ]),
      [
        'a DNS SAN holding ";", under the recommended config (no DNS= pair)',
        200,
        byCa,
        () => envoyXfcc(hostile({ dns: ['a.tenant.test;URI=spiffe://service.test'] }), NEEDED_DETAILS),
      ],
      [
        "a By (the proxy's own URI SAN) holding an unquoted quote",
        403,
        pinned,
        () => envoyXfcc(servicePeer(), NEEDED_DETAILS, ['spiffe://proxy.test/"x']),
      ],
      // The grammar, kept exact through every door: each row is the Service's element, one byte off.
      [
        'a quoted Hash (Envoy never quotes it)',
        403,
        pinned,
        () => envoyXfcc(servicePeer(), NEEDED_DETAILS).replace(/Hash=(\w+)/, 'Hash="$1"'),
      ],
      [
        'an unquoted Cert (Envoy always quotes it)',
        403,
        pinned,
        () => envoyXfcc(servicePeer(), NEEDED_DETAILS).replace(/Cert="([^"]*)"/, 'Cert=$1'),
      ],
      ['a key Envoy never writes', 403, pinned, () => `${envoyXfcc(servicePeer(), NEEDED_DETAILS)};X=1`],
      [
        // OpenSSL escapes a backslash in a name as "\\", which then stands right before Envoy's quote.
        'a Subject ending in an escaped backslash',
        200,
        byCa,
        () =>
          envoyXfcc(
            { ...hostile({ commonName: 'tenant workload \\' }), subject: 'CN=tenant workload \\\\' },
            ALL_DETAILS,
          ),
      ],
    ];
    describe.each(DOORS.map((door) => [door.name, door] as const))('%s', (_name, door) => {
      it.each(rows)('%s → %d', async (_row, status, mtls, xfcc) => {
        const { handled, options } = receiverOptions({
          mtls: { from: 'x-forwarded-client-cert', ...mtls() },
        });
        const open = await door.open(options);
        try {
          const event = buildEvent('ag.access_pass.issued');
          const answer = await open.send({
            headers: { ...DELIVERY_HEADERS, 'x-forwarded-client-cert': xfcc() },
            body: JSON.stringify(event),
          });
          expect(answer.status).toBe(status);
          // A refusal is never an acknowledgement: no handler ran.
          expect(handled).toEqual(status === 200 ? [event.id] : []);
          if (status === 403) {
            expect(JSON.parse(answer.text)).toMatchObject({
              type: 'urn:service-webhooks:problem:unreadable-client-certificate',
            });
          }
        } finally {
          await open.close();
        }
      });
    });
  },
);

describe("the mTLS guide's Envoy configuration (docs/mtls.md)", () => {
  it('sets the header (SANITIZE_SET) and asks only for the fields the receiver reads', () => {
    const guide = readFileSync(path.join(__dirname, '..', 'docs', 'mtls.md'), 'utf8');
    const block = /\n## Behind Envoy\n[\s\S]*?```yaml\n([\s\S]*?)```/.exec(guide)?.[1] ?? '';
    expect(/forward_client_cert_details: (\w+)/.exec(block)?.[1]).toBe('SANITIZE_SET');
    const details = /set_current_client_cert_details:\s*\{([^}]*)\}/.exec(block)?.[1] ?? '';
    const asked = Object.fromEntries(
      details.split(',').map((pair) => {
        const [key, value] = pair.split(':').map((part) => part.trim());
        return [key, value === 'true'];
      }),
    );
    // The rows above send what Envoy writes under NEEDED_DETAILS, and are accepted.
    expect(asked).toEqual(NEEDED_DETAILS);
  });
});
