import { nodeCrypto } from '../lazy-crypto';
import { CERTIFICATE_HEADERS } from './certificate-headers';
import type { CertificateCheck, CertificateRequest, CertificateSource } from './mtls-options';
import { peerCertificateOf, tlsSocketOf } from './read-socket-certificate';

/** How long a check is reused: a minute, and never past the certificate's own end. */
const REUSE_MS = 60_000;
/** Checks remembered at most; the oldest is forgotten first. */
const MAX_ENTRIES = 256;

export interface CheckCache {
  /** What identifies the presented certificate, cheaply; undefined when nothing was presented. */
  keyOf(request: CertificateRequest): string | undefined;
  get(key: string, now: number): CertificateCheck | undefined;
  set(key: string, check: CertificateCheck, now: number, validTo: number): void;
}

/**
 * Parsing and verifying a certificate costs a millisecond; every delivery on a keep-alive connection,
 * and every delivery from the same Service, presents the same one. The socket's certificate is
 * identified by its fingerprint (Node keeps the parsed peer certificate) and whether TLS verified it; a
 * header source by a hash of its header values. Each check is reused for a minute at most.
 */
export function createCheckCache(from: CertificateSource): CheckCache {
  const entries = new Map<string, { check: CertificateCheck; until: number }>();
  const headers = from === 'socket' ? [] : CERTIFICATE_HEADERS[from];
  return {
    keyOf(request) {
      if (from === 'socket') {
        const tls = tlsSocketOf(request.socket);
        const leaf = tls === undefined ? undefined : peerCertificateOf(tls);
        return leaf === undefined ? undefined : `${leaf.fingerprint256}|${tls?.authorized === true}`;
      }
      const values = headers.map((name) => request.header(name) ?? '');
      if (values.every((value) => value === '')) return undefined;
      return nodeCrypto().createHash('sha256').update(values.join('\n')).digest('base64');
    },
    get(key, now) {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      if (now < entry.until) return entry.check;
      entries.delete(key);
      return undefined;
    },
    set(key, check, now, validTo) {
      if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
      entries.set(key, { check, until: Math.min(now + REUSE_MS, validTo) });
    },
  };
}
