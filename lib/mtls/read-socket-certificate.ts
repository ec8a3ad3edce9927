import type { X509Certificate } from 'node:crypto';
import { MAX_CHAIN } from './parse-certificates';
import type { PresentedCertificate } from './presented-certificate';

interface TlsSocketLike {
  getPeerX509Certificate(): X509Certificate | undefined;
  authorized?: boolean;
}

/** The node TLS socket a request came on, or undefined when it did not come over TLS. */
export function tlsSocketOf(socket: unknown): TlsSocketLike | undefined {
  const tls = socket as TlsSocketLike | undefined;
  return typeof tls?.getPeerX509Certificate === 'function' ? tls : undefined;
}

const presented = new WeakMap<TlsSocketLike, X509Certificate | undefined>();

/**
 * The client's certificate on this connection, read once and remembered: Node links a server's
 * peer certificate to the intermediates the client sent by taking them out of the connection's
 * chain, so a second `getPeerX509Certificate()` returns the certificate alone, and a chain through an
 * intermediate would no longer reach `mtls.ca` (on the second request of a keep-alive connection, or
 * once the cache key has read it).
 */
export function peerCertificateOf(tls: TlsSocketLike): X509Certificate | undefined {
  if (!presented.has(tls)) presented.set(tls, tls.getPeerX509Certificate());
  return presented.get(tls);
}

/**
 * The certificate the client presented in the TLS handshake, with the chain Node linked to it.
 * `getPeerX509Certificate()` wraps what OpenSSL already holds: no DER is copied or parsed again.
 */
export function readSocketCertificate(socket: unknown): PresentedCertificate {
  const tls = tlsSocketOf(socket);
  if (tls === undefined) {
    return {
      kind: 'absent',
      detail:
        'The request did not arrive over TLS, so it has no client certificate. Serve it with https.createServer({ requestCert: true, ... }), or set mtls.from to the header your TLS-terminating proxy forwards.',
    };
  }
  const leaf = peerCertificateOf(tls);
  if (leaf === undefined) {
    return {
      kind: 'absent',
      detail:
        'No client certificate was presented in the TLS handshake; the server must ask for one (requestCert: true) and the client must send its certificate and key.',
    };
  }
  const intermediates: X509Certificate[] = [];
  // A self-signed issuer points at itself: the walk stops there, and after MAX_CHAIN links at most.
  for (let link = leaf.issuerCertificate; link !== undefined && intermediates.length < MAX_CHAIN;) {
    intermediates.push(link);
    const next = link.issuerCertificate;
    if (next === undefined || next.fingerprint256 === link.fingerprint256) break;
    link = next;
  }
  return { kind: 'certificate', leaf, intermediates, tlsVerified: tls.authorized === true };
}
