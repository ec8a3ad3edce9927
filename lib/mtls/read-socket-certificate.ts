import { X509Certificate } from 'node:crypto';
import { MAX_CHAIN } from './parse-certificates';
import type { PresentedCertificate } from './presented-certificate';

interface PeerCertificateLike {
  raw?: Buffer;
  issuerCertificate?: PeerCertificateLike;
}

interface TlsSocketLike {
  getPeerCertificate(detailed: boolean): PeerCertificateLike | null;
  authorized?: boolean;
}

function isTlsSocket(socket: unknown): socket is TlsSocketLike {
  return typeof (socket as TlsSocketLike | undefined)?.getPeerCertificate === 'function';
}

/** The certificate the client presented in the TLS handshake, with the chain Node linked to it. */
export function readSocketCertificate(socket: unknown): PresentedCertificate {
  if (!isTlsSocket(socket)) {
    return {
      kind: 'absent',
      detail:
        'The request did not arrive over TLS, so it has no client certificate. Serve it with https.createServer({ requestCert: true, ... }), or set mtls.from to the header your TLS-terminating proxy forwards.',
    };
  }
  const peer = socket.getPeerCertificate(true);
  if (peer?.raw === undefined) {
    return {
      kind: 'absent',
      detail:
        'No client certificate was presented in the TLS handshake; the server must ask for one (requestCert: true) and the client must send its certificate and key.',
    };
  }
  const leaf = new X509Certificate(peer.raw);
  const intermediates: X509Certificate[] = [];
  // A self-signed issuer points at itself: the walk stops there, and after MAX_CHAIN links at most.
  for (let link = peer; link.issuerCertificate !== undefined && link.issuerCertificate !== link;) {
    link = link.issuerCertificate;
    if (link.raw === undefined || intermediates.length === MAX_CHAIN) break;
    intermediates.push(new X509Certificate(link.raw));
  }
  return { kind: 'certificate', leaf, intermediates, tlsVerified: socket.authorized === true };
}
