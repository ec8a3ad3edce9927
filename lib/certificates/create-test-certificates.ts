import { webcrypto } from 'node:crypto';
import { checkOptionKeys } from '../check-option-keys';
import { OptionsError } from '../options-error';
import { ALGORITHM, DAY, MINUTE, privateKeyPem, serialNumber, x509 } from './x509-library';

/** A certificate and its private key, both PEM (the key is PKCS #8). */
export interface TestCertificate {
  /** The certificate, PEM. */
  cert: string;
  /** Its private key, PEM (PKCS #8). */
  key: string;
}

/** What {@link createTestCertificates} makes: a CA and two certificates it issued. */
export interface TestCertificates {
  /** The CA that issued `server` and `client`: the `ca` for both sides. */
  ca: TestCertificate;
  /** A server certificate for `127.0.0.1` and `localhost` (`https.createServer({ cert, key })`). */
  server: TestCertificate;
  /** A client certificate (common name `service-webhooks test client`) to present on deliveries. */
  client: TestCertificate;
}

/** Options of {@link issueTestCertificate}. */
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

/** Where `issueTestCertificate` keeps the CA's key between calls: the CA PEM pair. */
async function importCa(ca: TestCertificate) {
  const lib = x509();
  const cert = new lib.X509Certificate(ca.cert);
  const der = Buffer.from(ca.key.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  const signingKey = await webcrypto.subtle.importKey('pkcs8', der, ALGORITHM, false, ['sign']);
  return { cert, signingKey };
}

const ISSUE_KEYS = ['commonName', 'notBefore', 'notAfter', 'role'];

function checkIssueOptions(options: IssueCertificateOptions): void {
  const fail = (message: string): never => {
    throw new OptionsError('ERR_SW_OPTION', 'issueTestCertificate', message);
  };
  if (typeof options !== 'object' || options === null) fail('options must be an object');
  checkOptionKeys(options, ISSUE_KEYS, 'issueTestCertificate');
  const { commonName, notBefore, notAfter, role } = options;
  if (commonName !== undefined && (typeof commonName !== 'string' || commonName === '')) {
    fail('commonName must be a non-empty string');
  }
  for (const [name, date] of [
    ['notBefore', notBefore],
    ['notAfter', notAfter],
  ] as const) {
    if (date !== undefined && !(date instanceof Date && Number.isFinite(date.getTime())))
      fail(`${name} must be a valid Date`);
  }
  if (notBefore !== undefined && notAfter !== undefined && notAfter <= notBefore)
    fail('notAfter must be after notBefore');
  if (role !== undefined && role !== 'client' && role !== 'server')
    fail(`role must be 'client' or 'server' (got ${String(role)})`);
}

/**
 * Issues one more certificate from a CA made by `createTestCertificates` (or any ECDSA P-256 CA):
 * a second client for a rotation test, an expired one, a server certificate.
 */
export async function issueTestCertificate(
  ca: TestCertificate,
  options: IssueCertificateOptions = {},
): Promise<TestCertificate> {
  checkIssueOptions(options);
  const lib = x509();
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
