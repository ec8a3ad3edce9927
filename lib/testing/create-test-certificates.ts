import { randomBytes, webcrypto } from 'node:crypto';

type X509Library = typeof import('@peculiar/x509');
let library: X509Library | undefined;

/** Loaded on first use: @peculiar/x509 is an optional peer, and the rest of the test kit works without it. */
function x509(): X509Library {
  if (library === undefined) {
    try {
      // @peculiar/x509 2.x resolves its parts through tsyringe, which needs this polyfill loaded first.
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load of an optional peer
      require('reflect-metadata');
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load of an optional peer
      library = require('@peculiar/x509') as X509Library;
    } catch {
      throw new Error(
        '[service-webhooks] createTestCertificates needs @peculiar/x509 and reflect-metadata: npm install --save-dev @peculiar/x509 reflect-metadata',
      );
    }
  }
  return library;
}

/** A certificate and its private key, both PEM (the key is PKCS #8). */
export interface TestCertificate {
  cert: string;
  key: string;
}

export interface TestCertificates {
  /** The CA that issued `server` and `client`: the `ca` for both sides. */
  ca: TestCertificate;
  /** A server certificate for `127.0.0.1` and `localhost` (`https.createServer({ cert, key })`). */
  server: TestCertificate;
  /** A client certificate (common name `service-webhooks test client`) to present on deliveries. */
  client: TestCertificate;
}

export interface IssueCertificateOptions {
  /** The subject's common name. Defaults to `'service-webhooks test client'`. */
  commonName?: string;
  /** Defaults to one minute ago (a little slack for clocks). */
  notBefore?: Date;
  /** Defaults to 30 days after `notBefore`. */
  notAfter?: Date;
  /** `'client'` (the default) or `'server'`, which adds `127.0.0.1` and `localhost` as names. */
  role?: 'client' | 'server';
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] as number) & 0x7f; // positive, as RFC 5280 asks
  return bytes.toString('hex');
}

async function privateKeyPem(keys: webcrypto.CryptoKeyPair): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const lines = der.toString('base64').match(/.{1,64}/g) as string[];
  return `-----BEGIN PRIVATE KEY-----\n${lines.join('\n')}\n-----END PRIVATE KEY-----\n`;
}

/** Where `issueTestCertificate` keeps the CA's key between calls: the CA PEM pair. */
async function importCa(ca: TestCertificate) {
  const lib = x509();
  const cert = new lib.X509Certificate(ca.cert);
  const der = Buffer.from(ca.key.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  const signingKey = await webcrypto.subtle.importKey('pkcs8', der, ALGORITHM, false, ['sign']);
  return { cert, signingKey };
}

/**
 * Issues one more certificate from a CA made by `createTestCertificates` (or any ECDSA P-256 CA):
 * a second client for a rotation test, an expired one, a server certificate.
 */
export async function issueTestCertificate(
  ca: TestCertificate,
  options: IssueCertificateOptions = {},
): Promise<TestCertificate> {
  const lib = x509();
  lib.cryptoProvider.set(webcrypto as unknown as Parameters<X509Library['cryptoProvider']['set']>[0]);
  const issuer = await importCa(ca);
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const notBefore = options.notBefore ?? new Date(Date.now() - MINUTE);
  const server = options.role === 'server';
  const names = server
    ? [
        { type: 'ip' as const, value: '127.0.0.1' },
        { type: 'dns' as const, value: 'localhost' },
      ]
    : [{ type: 'dns' as const, value: 'webhooks.test-client.invalid' }];
  const cert = await lib.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: `CN=${options.commonName ?? (server ? 'localhost' : 'service-webhooks test client')}`,
    issuer: issuer.cert.subject,
    notBefore,
    notAfter: options.notAfter ?? new Date(notBefore.getTime() + 30 * DAY),
    publicKey: keys.publicKey,
    signingKey: issuer.signingKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new lib.BasicConstraintsExtension(false, undefined, true),
      new lib.KeyUsagesExtension(lib.KeyUsageFlags.digitalSignature, true),
      new lib.ExtendedKeyUsageExtension([
        server ? lib.ExtendedKeyUsage.serverAuth : lib.ExtendedKeyUsage.clientAuth,
      ]),
      new lib.SubjectAlternativeNameExtension(names),
      await lib.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await lib.AuthorityKeyIdentifierExtension.create(issuer.cert.publicKey),
    ],
  });
  return { cert: cert.toString('pem'), key: await privateKeyPem(keys) };
}

/**
 * A CA, a server certificate for `127.0.0.1`/`localhost` and a client certificate, made in-process
 * (ECDSA P-256, no openssl), valid from a minute ago for 30 days. Needs the optional peers
 * `@peculiar/x509` and `reflect-metadata`.
 */
export async function createTestCertificates(): Promise<TestCertificates> {
  const lib = x509();
  lib.cryptoProvider.set(webcrypto as unknown as Parameters<X509Library['cryptoProvider']['set']>[0]);
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const notBefore = new Date(Date.now() - MINUTE);
  const caCert = await lib.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: 'CN=service-webhooks test CA',
    notBefore,
    notAfter: new Date(notBefore.getTime() + 365 * DAY),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new lib.BasicConstraintsExtension(true, 0, true),
      new lib.KeyUsagesExtension(lib.KeyUsageFlags.keyCertSign | lib.KeyUsageFlags.cRLSign, true),
      await lib.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const ca = { cert: caCert.toString('pem'), key: await privateKeyPem(keys) };
  return {
    ca,
    server: await issueTestCertificate(ca, { role: 'server' }),
    client: await issueTestCertificate(ca),
  };
}
