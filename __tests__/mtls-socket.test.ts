import { createClientCertificateVerifier, type MtlsOptions } from '../lib/mtls';
import {
  acceptedReply,
  derBase64,
  fingerprintOf,
  mtlsFixtures,
  spkiOf,
  type MtlsFixtures,
} from './support/mtls-fixtures';
import { request, startHttpVerifierServer, startTlsVerifierServer } from './support/mtls-server';
import { issueTestCertificate, type TestCertificate } from 'service-webhooks/testing';

let f: MtlsFixtures;
beforeAll(async () => {
  f = await mtlsFixtures();
});

/** Presents `client` (or no certificate) to a TLS server checking with `options`. */
async function present(
  options: MtlsOptions,
  client: TestCertificate | null,
  headers: Record<string, string> = {},
) {
  const server = await startTlsVerifierServer(f.certs, createClientCertificateVerifier(options, 'test'));
  try {
    return await request(server.url, { ca: f.certs.ca.cert, ...(client ?? {}), headers });
  } finally {
    await server.close();
  }
}

describe('client certificate from the TLS socket', () => {
  it('answers 401 when no certificate is presented', async () => {
    const reply = await present({ fingerprints: [fingerprintOf(f.certs.client.cert)] }, null);
    expect(reply.status).toBe(401);
    expect(reply.body).toMatchObject({ ok: false, slug: 'missing-client-certificate' });
  });

  const accepted: [string, () => MtlsOptions][] = [
    ['a fingerprint as openssl prints it', () => ({ fingerprints: [fingerprintOf(f.certs.client.cert)] })],
    [
      'a fingerprint in lowercase without colons',
      () => ({ fingerprints: [fingerprintOf(f.certs.client.cert).replace(/:/g, '').toLowerCase()] }),
    ],
    ['an SPKI hash in base64', () => ({ spki: [spkiOf(f.certs.client.cert)] })],
    [
      'an SPKI hash in hex',
      () => ({ spki: [Buffer.from(spkiOf(f.certs.client.cert), 'base64').toString('hex')] }),
    ],
    ['the common name', () => ({ subjects: ['service-webhooks test client'] })],
    ['a typed subject alternative name', () => ({ subjects: ['DNS:webhooks.test-client.invalid'] })],
    ['a RegExp on the subject', () => ({ subjects: [/^CN=service-webhooks test client$/g] })],
    ['the CA', () => ({ ca: f.certs.ca.cert })],
    [
      'the CA, a fingerprint and a subject together',
      () => ({
        ca: [f.certs.ca.cert],
        fingerprints: [fingerprintOf(f.certs.client.cert)],
        subjects: [/test client/],
      }),
    ],
  ];
  it.each(accepted)('accepts the pinned certificate by %s', async (_name, options) => {
    const reply = await present(options(), f.certs.client);
    expect(reply).toEqual(acceptedReply(f.certs.client.cert));
  });

  const refused: [string, () => MtlsOptions, () => TestCertificate, string][] = [
    [
      'another fingerprint',
      () => ({ fingerprints: [fingerprintOf(f.next.cert)] }),
      () => f.certs.client,
      'client-certificate-not-pinned',
    ],
    [
      'another public key',
      () => ({ spki: [spkiOf(f.next.cert)] }),
      () => f.certs.client,
      'client-certificate-not-pinned',
    ],
    [
      'another name',
      () => ({ subjects: ['next client', /^CN=other/] }),
      () => f.certs.client,
      'client-certificate-subject-mismatch',
    ],
    [
      'a part of the name, as a string',
      () => ({ subjects: ['test client'] }),
      () => f.certs.client,
      'client-certificate-subject-mismatch',
    ],
    ['another CA', () => ({ ca: f.certs.ca.cert }), () => f.stranger, 'untrusted-client-certificate'],
    [
      'only a subject, on a certificate TLS did not verify',
      () => ({ subjects: ['service-webhooks test client'] }),
      () => f.stranger,
      'untrusted-client-certificate',
    ],
    [
      'the CA, with the right CA but the wrong pin',
      () => ({ ca: f.certs.ca.cert, fingerprints: [fingerprintOf(f.next.cert)] }),
      () => f.certs.client,
      'client-certificate-not-pinned',
    ],
    [
      'an expired certificate, pinned',
      () => ({ fingerprints: [fingerprintOf(f.expired.cert)] }),
      () => f.expired,
      'client-certificate-expired',
    ],
    [
      'an expired certificate of the CA',
      () => ({ ca: f.certs.ca.cert }),
      () => f.expired,
      'client-certificate-expired',
    ],
    [
      'a certificate not valid yet',
      () => ({ ca: f.certs.ca.cert }),
      () => f.notYetValid,
      'client-certificate-not-yet-valid',
    ],
  ];
  it.each(refused)('refuses with 403 %s', async (_name, options, client, slug) => {
    const cert = client();
    const reply = await present(options(), cert);
    expect(reply.status).toBe(403);
    expect(reply.body).toMatchObject({ ok: false, slug, fingerprint: fingerprintOf(cert.cert) });
    const text = JSON.stringify(reply.body);
    expect(text).not.toContain('BEGIN CERTIFICATE');
    expect(text).not.toContain(derBase64(cert.cert).slice(0, 40));
  });

  it('accepts both certificates of a rotation and nothing else', async () => {
    const options = { fingerprints: [fingerprintOf(f.certs.client.cert), fingerprintOf(f.next.cert)] };
    expect((await present(options, f.certs.client)).status).toBe(200);
    expect((await present(options, f.next)).status).toBe(200);
    expect((await present(options, f.stranger)).status).toBe(403);
  });

  it.each([
    ['x-forwarded-client-cert', 'Hash=abc'],
    ['client-cert', ':AAAA:'],
    ['client-cert-chain', ':AAAA:'],
    ['x-ssl-client-cert', '-----BEGIN%20CERTIFICATE-----'],
    ['x-ssl-client-verify', 'SUCCESS'],
    ['x-amzn-mtls-clientcert', '-----BEGIN%20CERTIFICATE-----'],
    ['x-amzn-mtls-clientcert-leaf', '-----BEGIN%20CERTIFICATE-----'],
  ])(
    'refuses a request carrying %s it was not told to trust, even with a good certificate',
    async (name, value) => {
      const reply = await present({ fingerprints: [fingerprintOf(f.certs.client.cert)] }, f.certs.client, {
        [name]: value,
      });
      expect(reply.status).toBe(403);
      expect(reply.body).toMatchObject({ ok: false, slug: 'untrusted-certificate-header' });
      expect((reply.body as { detail: string }).detail).toContain(name);
    },
  );

  it('keeps answering each certificate for itself when one verifier sees many, and honours the end of validity', async () => {
    const shortLived = await issueTestCertificate(f.certs.ca, { notAfter: new Date(Date.now() + 30_000) });
    const verifier = createClientCertificateVerifier({ ca: f.certs.ca.cert }, 'test');
    const server = await startTlsVerifierServer(f.certs, verifier);
    const now = jest.spyOn(Date, 'now');
    try {
      const statuses = async (...clients: TestCertificate[]) => {
        const replies = [];
        for (const client of clients)
          replies.push((await request(server.url, { ca: f.certs.ca.cert, ...client })).status);
        return replies;
      };
      expect(await statuses(f.certs.client, f.stranger, f.certs.client, shortLived, f.stranger)).toEqual([
        200, 403, 200, 200, 403,
      ]);
      // A check is reused for a while, but never past the certificate's notAfter.
      const later = Date.now() + 31_000;
      now.mockImplementation(() => later);
      const reply = await request(server.url, { ca: f.certs.ca.cert, ...shortLived });
      expect(reply.body).toMatchObject({ slug: 'client-certificate-expired' });
      expect(await statuses(f.certs.client)).toEqual([200]);
    } finally {
      now.mockRestore();
      await server.close();
    }
  });

  it('answers 401 on a connection without TLS', async () => {
    const server = await startHttpVerifierServer(
      createClientCertificateVerifier({ ca: f.certs.ca.cert }, 'test'),
    );
    try {
      const reply = await request(server.url);
      expect(reply.status).toBe(401);
      expect((reply.body as { detail: string }).detail).toMatch(/did not arrive over TLS/);
    } finally {
      await server.close();
    }
  });
});
