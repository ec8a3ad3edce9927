import type { X509Certificate } from 'node:crypto';
import { CLIENT_AUTH, KEY_USAGE, NS_SSL_CLIENT, type CertificateExtensions } from './certificate-extensions';
import { describeInChain as who } from './describe-in-chain';
import { MAX_CHAIN } from './parse-certificates';

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
 * A chain that reached a trusted CA, carried on through `cas` while that CA is not self-signed and
 * another of them issued it: OpenSSL does so, so the constraints of a root given with its
 * intermediate in `mtls.ca` still bind. Bounded by the number of `cas`.
 */
function climbTrusted(
  chain: X509Certificate[],
  cas: readonly X509Certificate[],
  now: number,
): X509Certificate[] {
  for (let top = chain.at(-1) as X509Certificate; chain.length <= cas.length + MAX_CHAIN;) {
    if (top.subject === top.issuer && issuedBy(top, top)) return chain;
    const above = cas.find(
      (ca) => !chain.includes(ca) && validityProblem(ca, now) === undefined && issuedBy(top, ca),
    );
    if (above === undefined) return chain;
    chain.push(above);
    top = above;
  }
  return chain;
}

/**
 * The chain from `leaf` to one of `cas` (leaf first; last the CA it reached, or the root above that
 * CA in `cas`), through the presented
 * `intermediates` (each a CA, signed, within its dates); undefined when there is none. The walk is
 * bounded by the number of intermediates.
 */
export function chainTo(
  leaf: X509Certificate,
  intermediates: readonly X509Certificate[],
  cas: readonly X509Certificate[],
  now: number,
): X509Certificate[] | undefined {
  const chain = [leaf];
  let current = leaf;
  const unused = [...intermediates];
  for (;;) {
    const anchor = cas.find((ca) => validityProblem(ca, now) === undefined && issuedBy(current, ca));
    if (anchor !== undefined) return climbTrusted([...chain, anchor], cas, now);
    const index = unused.findIndex(
      (cert) => cert.ca && validityProblem(cert, now) === undefined && issuedBy(current, cert),
    );
    if (index === -1) return undefined;
    current = unused.splice(index, 1)[0] as X509Certificate;
    chain.push(current);
  }
}

/**
 * What `openssl verify -purpose sslclient` refuses in a chain whose signatures and dates hold, or
 * undefined (`extensions` are the chain's, in its order): a critical extension OpenSSL does not handle,
 * anywhere in it; an extendedKeyUsage without clientAuth anywhere in it; a client certificate whose
 * keyUsage allows neither digitalSignature nor keyAgreement, or whose nsCertType is not SSL client; a
 * CA without basicConstraints CA:TRUE or whose keyUsage lacks keyCertSign; a pathLenConstraint
 * exceeded (counted as OpenSSL does: the CAs below, self-issued ones excepted). A CA:TRUE client
 * certificate passes, as it does in OpenSSL.
 */
export function purposeProblem(
  chain: readonly X509Certificate[],
  extensions: readonly CertificateExtensions[],
): string | undefined {
  let below = 0;
  for (let depth = 0; depth < chain.length; depth++) {
    const cert = chain[depth] as X509Certificate;
    const { basicConstraints, keyUsage, extKeyUsage, nsCertType, unhandledCritical } = extensions[
      depth
    ] as CertificateExtensions;
    if (unhandledCritical.length > 0)
      return `${who(cert, depth)} has a critical extension OpenSSL does not handle (${unhandledCritical.join(', ')})`;
    if (extKeyUsage !== undefined && !extKeyUsage.includes(CLIENT_AUTH))
      return `${who(cert, depth)} has an extendedKeyUsage without clientAuth`;
    if (depth === 0) {
      if (keyUsage !== undefined && (keyUsage & (KEY_USAGE.digitalSignature | KEY_USAGE.keyAgreement)) === 0)
        return `${who(cert, depth)} has a keyUsage with neither digitalSignature nor keyAgreement`;
      if (nsCertType !== undefined && (nsCertType & NS_SSL_CLIENT) === 0)
        return `${who(cert, depth)} has an nsCertType without SSL client`;
      continue;
    }
    if (basicConstraints?.ca !== true) return `${who(cert, depth)} is not a CA (basicConstraints CA:TRUE)`;
    if (keyUsage !== undefined && (keyUsage & KEY_USAGE.keyCertSign) === 0)
      return `${who(cert, depth)} has a keyUsage without keyCertSign`;
    const limit = basicConstraints.pathLen;
    if (depth > 1 && limit !== undefined && below > limit)
      return `${who(cert, depth)} allows ${limit} CA${limit === 1 ? '' : 's'} below it (pathLenConstraint), the chain has ${below}`;
    if (cert.subject !== cert.issuer) below++;
  }
  return undefined;
}
