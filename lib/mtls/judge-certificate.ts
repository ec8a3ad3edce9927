import type { X509Certificate } from 'node:crypto';
import { certificateExtensions } from './certificate-extensions';
import { certificateFacts } from './certificate-facts';
import { chainTo, purposeProblem, validityProblem } from './check-validity';
import type { CertificateCheck } from './mtls-options';
import { nameConstraintProblem } from './name-constraint-problem';
import type { ResolvedMtls } from './resolve-mtls-options';

/**
 * Decides on a presented certificate: its dates, then the CA, then the pins, then the names, and
 * answers the first failure with the certificate's fingerprint and subject.
 */
export function judgeCertificate(
  mtls: ResolvedMtls,
  leaf: X509Certificate,
  intermediates: X509Certificate[],
  tlsVerified: boolean,
  now: number,
): CertificateCheck {
  const facts = certificateFacts(leaf, mtls.spki.size > 0);
  const deny = (slug: string, detail: string): CertificateCheck => ({
    ok: false,
    status: 403,
    slug,
    detail,
    fingerprint: facts.fingerprint,
    subject: facts.subject,
  });
  const dates = validityProblem(leaf, now);
  if (dates === 'expired') {
    return deny(
      'client-certificate-expired',
      `The client certificate expired on ${new Date(leaf.validTo).toISOString()}.`,
    );
  }
  if (dates === 'not-yet-valid') {
    return deny(
      'client-certificate-not-yet-valid',
      `The client certificate is valid only from ${new Date(leaf.validFrom).toISOString()}.`,
    );
  }
  const pinned = mtls.fingerprints.size + mtls.spki.size > 0;
  if (mtls.cas.length > 0) {
    const chain = chainTo(leaf, intermediates, mtls.cas, now);
    if (chain === undefined)
      return deny(
        'untrusted-client-certificate',
        'The client certificate does not chain to a CA in mtls.ca.',
      );
    // The signatures hold; what OpenSSL also requires of a chain for a TLS client.
    const extensions = chain.map(certificateExtensions);
    const problem = purposeProblem(chain, extensions) ?? nameConstraintProblem(chain, extensions);
    if (problem !== undefined)
      return deny(
        'untrusted-client-certificate',
        `The client certificate's chain is not valid for a TLS client: ${problem}.`,
      );
  }
  if (!pinned && mtls.cas.length === 0 && !tlsVerified) {
    return deny(
      'untrusted-client-certificate',
      "Only mtls.subjects is set and nothing verified this certificate's chain: add mtls.ca or a pin, or let the TLS server (ca, rejectUnauthorized) or the proxy verify it.",
    );
  }
  if (pinned && !mtls.fingerprints.has(facts.fingerprintHex) && !mtls.spki.has(facts.spkiHex as string)) {
    return deny(
      'client-certificate-not-pinned',
      'The client certificate matches none of mtls.fingerprints and mtls.spki; if the Service rotated its certificate, add the fingerprint shown here.',
    );
  }
  if (
    mtls.subjects.length > 0 &&
    !facts.names.some((name) => mtls.subjects.some((matches) => matches(name)))
  ) {
    return deny(
      'client-certificate-subject-mismatch',
      "The client certificate's names match none of mtls.subjects.",
    );
  }
  return { ok: true, fingerprint: facts.fingerprint, subject: facts.subject };
}
