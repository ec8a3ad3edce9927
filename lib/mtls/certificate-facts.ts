import type { X509Certificate } from 'node:crypto';
import { nodeCrypto } from '../lazy-crypto';

/** What is known of a certificate for pinning, matching and logging; never its body. */
export interface CertificateFacts {
  /** SHA-256 of the DER, as `AB:CD:…` (Node's `fingerprint256`, openssl's `-fingerprint -sha256`). */
  fingerprint: string;
  /** The same, lowercase hex without colons, for comparison. */
  fingerprintHex: string;
  /** SHA-256 of the DER SubjectPublicKeyInfo, lowercase hex; only computed when asked for (it is slow). */
  spkiHex: string | undefined;
  /** The subject's attributes joined with ", " (`O=Acme, CN=webhooks`). */
  subject: string;
  /** What `subjects` matchers are tried against: CN, subject, SANs typed and bare. */
  names: string[];
}

// Node writes a value holding a separator as a JSON string: `DNS:"a, b"`, `CN="x,y"`.
const SAN_ENTRY = /([A-Za-z][A-Za-z ]*):("(?:[^"\\]|\\.)*"|[^,]*)(?:, |$)/gy;

function unquote(value: string): string {
  if (!value.startsWith('"')) return value;
  try {
    return JSON.parse(value) as string;
  } catch {
    return value;
  }
}

function subjectAltNames(text: string | undefined): { typed: string; bare: string }[] {
  if (text === undefined || text === '') return [];
  const entries: { typed: string; bare: string }[] = [];
  SAN_ENTRY.lastIndex = 0;
  for (let match = SAN_ENTRY.exec(text); match !== null && match[0] !== ''; match = SAN_ENTRY.exec(text)) {
    const bare = unquote(match[2] as string);
    entries.push({ typed: `${match[1] as string}:${bare}`, bare });
    if (SAN_ENTRY.lastIndex >= text.length) break;
  }
  return entries;
}

/** Reads the facts of one certificate: its hashes (the public key's only when `withSpki`) and names. */
export function certificateFacts(cert: X509Certificate, withSpki: boolean): CertificateFacts {
  // Node computes fingerprint256 natively, without copying the DER out.
  const fingerprint = cert.fingerprint256;
  const spkiHex = withSpki
    ? nodeCrypto()
        .createHash('sha256')
        .update(cert.publicKey.export({ type: 'spki', format: 'der' }))
        .digest('hex')
    : undefined;
  const attributes = cert.subject.split('\n').filter((line) => line !== '');
  const subject = attributes.join(', ');
  const commonNames = attributes
    .filter((line) => line.startsWith('CN='))
    .map((line) => unquote(line.slice(3)));
  const sans = subjectAltNames(cert.subjectAltName);
  return {
    fingerprint,
    fingerprintHex: fingerprint.replace(/:/g, '').toLowerCase(),
    spkiHex,
    subject,
    names: [...commonNames, subject, ...sans.flatMap((san) => [san.typed, san.bare])],
  };
}
