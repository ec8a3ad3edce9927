import type { X509Certificate } from 'node:crypto';

/** Why a certificate is outside its validity dates at `now`, or undefined when it is inside them. */
export function validityProblem(cert: X509Certificate, now: number): 'expired' | 'not-yet-valid' | undefined {
  if (now > Date.parse(cert.validTo)) return 'expired';
  if (now < Date.parse(cert.validFrom)) return 'not-yet-valid';
  return undefined;
}

function issuedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  return cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
}

/**
 * True when `leaf` chains to one of `cas`, through the presented `intermediates` (each a CA, signed,
 * within its dates). The walk is bounded by the number of intermediates.
 */
export function chainsTo(
  leaf: X509Certificate,
  intermediates: readonly X509Certificate[],
  cas: readonly X509Certificate[],
  now: number,
): boolean {
  let current = leaf;
  const unused = [...intermediates];
  for (;;) {
    if (cas.some((ca) => validityProblem(ca, now) === undefined && issuedBy(current, ca))) return true;
    const index = unused.findIndex(
      (cert) => cert.ca && validityProblem(cert, now) === undefined && issuedBy(current, cert),
    );
    if (index === -1) return false;
    current = unused.splice(index, 1)[0] as X509Certificate;
  }
}
