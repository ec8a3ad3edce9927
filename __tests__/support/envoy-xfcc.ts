import { createHash, X509Certificate } from 'node:crypto';

/** Envoy's `set_current_client_cert_details`: which fields it writes beside By and Hash. */
export interface EnvoyDetails {
  cert?: boolean;
  chain?: boolean;
  subject?: boolean;
  uri?: boolean;
  dns?: boolean;
}

/** What Envoy knows of the client's certificate: the PEM it verified and the SANs in it. */
export interface EnvoyPeer {
  /** The leaf, PEM. */
  cert: string;
  /** The chain the client sent, leaf first, PEM; defaults to the leaf alone. */
  chain?: string;
  dns?: readonly string[];
  uri?: readonly string[];
  /** Its subject as OpenSSL prints it for RFC 2253 (`CN=a\\` for a name ending in a backslash); defaults to one read from the leaf. */
  subject?: string;
}

/**
 * The element Envoy writes for a verified client certificate, byte for byte as its connection
 * manager does: By (one per URI SAN of its own certificate) and Hash always; then, as asked, Cert,
 * Chain, Subject, URI, DNS in that order. Only Cert, Chain and Subject are quoted: Envoy writes By,
 * URI and DNS as the certificates hold them, neither quoted nor escaped.
 */
export function envoyXfcc(
  peer: EnvoyPeer,
  details: EnvoyDetails,
  by: readonly string[] = ['spiffe://proxy.test'],
) {
  const leaf = new X509Certificate(peer.cert);
  const pairs = by.map((uri) => `By=${uri}`);
  pairs.push(`Hash=${createHash('sha256').update(leaf.raw).digest('hex')}`);
  if (details.cert) pairs.push(`Cert="${encodeURIComponent(peer.cert)}"`);
  if (details.chain) pairs.push(`Chain="${encodeURIComponent(peer.chain ?? peer.cert)}"`);
  // OpenSSL's RFC 2253 form: most specific attribute first.
  if (details.subject) {
    pairs.push(`Subject="${peer.subject ?? leaf.subject.split('\n').reverse().join(',')}"`);
  }
  // Envoy writes an empty URI when the certificate has none.
  if (details.uri) pairs.push(...(peer.uri?.length ? peer.uri : ['']).map((uri) => `URI=${uri}`));
  if (details.dns) pairs.push(...(peer.dns ?? []).map((dns) => `DNS=${dns}`));
  return pairs.join(';');
}

/** Every field Envoy can write: the configuration docs/mtls.md recommended before issue 28. */
export const ALL_DETAILS: EnvoyDetails = { cert: true, chain: true, subject: true, uri: true, dns: true };
/** What the receiver reads, and all docs/mtls.md now asks for. */
export const NEEDED_DETAILS: EnvoyDetails = { cert: true, chain: true };
