import { createPrivateKey, X509Certificate } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import {
  createTestCertificates,
  issueTestCertificate,
  type TestCertificates,
} from 'service-webhooks/testing';

let certs: TestCertificates;
beforeAll(async () => {
  certs = await createTestCertificates();
});

describe('createTestCertificates', () => {
  it('makes a CA that issued a server certificate for 127.0.0.1 and localhost and a client certificate', () => {
    const ca = new X509Certificate(certs.ca.cert);
    const server = new X509Certificate(certs.server.cert);
    const client = new X509Certificate(certs.client.cert);
    expect(ca.ca).toBe(true);
    expect(ca.checkIssued(ca)).toBe(true);
    for (const leaf of [server, client]) {
      expect(leaf.ca).toBe(false);
      expect(leaf.checkIssued(ca) && leaf.verify(ca.publicKey)).toBe(true);
    }
    expect(server.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(server.checkHost('localhost')).toBe('localhost');
    expect(client.subject).toBe('CN=service-webhooks test client');
  });

  it('pairs every certificate with its private key, PEM PKCS #8', () => {
    for (const pair of [certs.ca, certs.server, certs.client]) {
      expect(pair.key).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
      expect(new X509Certificate(pair.cert).checkPrivateKey(createPrivateKey(pair.key))).toBe(true);
    }
  });

  it('makes a new CA on every call', async () => {
    const other = await createTestCertificates();
    expect(new X509Certificate(other.ca.cert).fingerprint256).not.toBe(
      new X509Certificate(certs.ca.cert).fingerprint256,
    );
  });

  it('issues more certificates from the same CA, with the validity asked for', async () => {
    const notBefore = new Date('2020-01-01T00:00:00Z');
    const notAfter = new Date('2020-02-01T00:00:00Z');
    const expired = await issueTestCertificate(certs.ca, { commonName: 'old client', notBefore, notAfter });
    const cert = new X509Certificate(expired.cert);
    expect(cert.subject).toBe('CN=old client');
    expect(new Date(cert.validTo).toISOString()).toBe(notAfter.toISOString());
    expect(cert.verify(new X509Certificate(certs.ca.cert).publicKey)).toBe(true);
  });

  it.each([
    [
      'a misspelled option',
      { commonNam: 'x' },
      /issueTestCertificate: unknown option "commonNam"; did you mean "commonName"\?/,
    ],
    ['an empty common name', { commonName: '' }, /commonName must be a non-empty string/],
    ['a date that is not a Date', { notAfter: '2030-01-01' }, /notAfter must be a valid Date/],
    ['an invalid Date', { notBefore: new Date('nope') }, /notBefore must be a valid Date/],
    [
      'an end before the start',
      { notBefore: new Date(2030, 0, 2), notAfter: new Date(2030, 0, 1) },
      /notAfter must be after notBefore/,
    ],
    ['an unknown role', { role: 'admin' }, /role must be 'client' or 'server' \(got admin\)/],
  ])('issueTestCertificate refuses %s', async (_name, options, message) => {
    await expect(issueTestCertificate(certs.ca, options as never)).rejects.toThrow(message);
  });

  it('says which optional peers to install when @peculiar/x509 is missing', async () => {
    let load!: typeof createTestCertificates;
    jest.isolateModules(() => {
      jest.doMock('@peculiar/x509', () => {
        throw new Error("Cannot find module '@peculiar/x509'");
      });
      ({ createTestCertificates: load } =
        jest.requireActual<typeof import('service-webhooks/testing')>('service-webhooks/testing'));
    });
    await expect(load()).rejects.toThrow(
      '[service-webhooks] createTestCertificates needs @peculiar/x509 and reflect-metadata: npm install --save-dev @peculiar/x509 reflect-metadata',
    );
  });

  it('works for a real mutual TLS handshake on 127.0.0.1 and localhost', async () => {
    const server = https.createServer(
      {
        requestCert: true,
        rejectUnauthorized: true,
        ca: certs.ca.cert,
        cert: certs.server.cert,
        key: certs.server.key,
      },
      (req, res) => res.end(String((req.socket as TLSSocket).authorized)),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      for (const host of ['127.0.0.1', 'localhost']) {
        const body = await new Promise<string>((resolve, reject) => {
          https
            .get(
              `https://${host}:${port}/`,
              {
                ca: certs.ca.cert,
                cert: certs.client.cert,
                key: certs.client.key,
                agent: false,
                timeout: 5000,
              },
              (res) => {
                let text = '';
                res.on('data', (chunk: Buffer) => (text += chunk.toString()));
                res.on('end', () => resolve(text));
              },
            )
            .on('error', reject);
        });
        expect(body).toBe('true');
      }
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
