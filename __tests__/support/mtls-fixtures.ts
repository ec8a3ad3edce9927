import { createHash, X509Certificate } from 'node:crypto';
import {
  createTestCertificates,
  issueTestCertificate,
  type TestCertificate,
  type TestCertificates,
} from 'service-webhooks/testing';

const DAY = 24 * 60 * 60 * 1000;

/** The certificates the mTLS tests present: one CA's clients, and strangers. */
export interface MtlsFixtures {
  certs: TestCertificates;
  /** A second client of the same CA (the certificate a rotation moves to). */
  next: TestCertificate;
  expired: TestCertificate;
  notYetValid: TestCertificate;
  /** A client of another CA. */
  stranger: TestCertificate;
}

export async function mtlsFixtures(): Promise<MtlsFixtures> {
  const certs = await createTestCertificates();
  const now = Date.now();
  return {
    certs,
    next: await issueTestCertificate(certs.ca, { commonName: 'next client' }),
    expired: await issueTestCertificate(certs.ca, {
      commonName: 'expired client',
      notBefore: new Date(now - 30 * DAY),
      notAfter: new Date(now - DAY),
    }),
    notYetValid: await issueTestCertificate(certs.ca, {
      commonName: 'future client',
      notBefore: new Date(now + DAY),
    }),
    stranger: (await createTestCertificates()).client,
  };
}

/** `AB:CD:…`, as Node and openssl print it. */
export const fingerprintOf = (pem: string): string => new X509Certificate(pem).fingerprint256;

/** SHA-256 of the public key, base64, as Envoy's verify_certificate_spki takes it. */
export const spkiOf = (pem: string): string =>
  createHash('sha256')
    .update(new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64');

/** The base64 DER body of a PEM certificate. */
export const derBase64 = (pem: string): string => new X509Certificate(pem).raw.toString('base64');

/** What a verifier server answers for an accepted certificate. */
export const acceptedReply = (pem: string) => ({
  status: 200,
  body: {
    ok: true,
    fingerprint: fingerprintOf(pem),
    subject: new X509Certificate(pem).subject.split('\n').join(', '),
  },
});
