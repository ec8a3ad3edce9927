import type { X509Certificate } from 'node:crypto';

/** The extensions a chain is judged by, read from the DER: Node's X509Certificate exposes none of them. */
export interface CertificateExtensions {
  /** basicConstraints: absent, or `cA` with its `pathLenConstraint` (undefined when unbounded). */
  basicConstraints: { ca: boolean; pathLen: number | undefined } | undefined;
  /** keyUsage as a bit mask (bit 0 = digitalSignature is 1 << 0), or undefined when absent. */
  keyUsage: number | undefined;
  /** extendedKeyUsage OIDs in dotted form, or undefined when absent. */
  extKeyUsage: string[] | undefined;
  /** Netscape's nsCertType as a bit mask (bit 0 = SSL client), or undefined when absent. */
  nsCertType: number | undefined;
}

export const KEY_USAGE = { digitalSignature: 1 << 0, keyAgreement: 1 << 4, keyCertSign: 1 << 5 } as const;
export const NS_SSL_CLIENT = 1 << 0;
export const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

const OID_BASIC_CONSTRAINTS = '2.5.29.19';
const OID_KEY_USAGE = '2.5.29.15';
const OID_EXT_KEY_USAGE = '2.5.29.37';
const OID_NS_CERT_TYPE = '2.16.840.1.113730.1.1';

interface Tlv {
  tag: number;
  start: number;
  end: number;
}

/** One DER tag-length-value at `at`, bounded by `limit`; throws on anything malformed. */
function tlv(der: Buffer, at: number, limit: number): Tlv {
  if (at + 2 > limit) throw new Error('truncated DER');
  const tag = der[at] as number;
  let length = der[at + 1] as number;
  let start = at + 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    if (bytes === 0 || bytes > 4 || start + bytes > limit) throw new Error('bad DER length');
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + (der[start + i] as number);
    start += bytes;
  }
  const end = start + length;
  if (end > limit) throw new Error('DER runs past its container');
  return { tag, start, end };
}

function children(der: Buffer, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let at = parent.start; at < parent.end;) {
    const child = tlv(der, at, parent.end);
    out.push(child);
    at = child.end;
  }
  return out;
}

function oid(der: Buffer, node: Tlv): string {
  const arcs: number[] = [];
  let value = 0;
  for (let i = node.start; i < node.end; i++) {
    const byte = der[i] as number;
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) {
      if (arcs.length === 0)
        arcs.push(value < 80 ? Math.floor(value / 40) : 2, value < 80 ? value % 40 : value - 80);
      else arcs.push(value);
      value = 0;
    }
  }
  return arcs.join('.');
}

/** A BIT STRING's named bits as a mask: bit n of the ASN.1 string is `1 << n`. */
function bits(der: Buffer, node: Tlv): number {
  let mask = 0;
  // The first content byte counts the unused bits; named bits start at the top of the next byte.
  for (let i = node.start + 1, n = 0; i < node.end && n < 32; i++) {
    const byte = der[i] as number;
    for (let b = 7; b >= 0; b--, n++) if (byte & (1 << b)) mask |= 2 ** n;
  }
  return mask;
}

/** Reads the four extensions from a certificate's DER (tbsCertificate → [3] extensions). */
export function certificateExtensions(cert: X509Certificate): CertificateExtensions {
  const der = cert.raw;
  const certificate = tlv(der, 0, der.length);
  const tbs = children(der, certificate)[0];
  if (tbs === undefined) throw new Error('no tbsCertificate');
  const found: CertificateExtensions = {
    basicConstraints: undefined,
    keyUsage: undefined,
    extKeyUsage: undefined,
    nsCertType: undefined,
  };
  const wrapper = children(der, tbs).find((node) => node.tag === 0xa3);
  if (wrapper === undefined) return found;
  const [list] = children(der, wrapper);
  if (list === undefined) return found;
  for (const extension of children(der, list)) {
    const parts = children(der, extension);
    const id = parts[0];
    const value = parts.at(-1);
    if (id === undefined || value === undefined || value.tag !== 0x04) continue;
    const inner = tlv(der, value.start, value.end);
    switch (oid(der, id)) {
      case OID_BASIC_CONSTRAINTS: {
        const fields = children(der, inner);
        const flag = fields.find((node) => node.tag === 0x01);
        const length = fields.find((node) => node.tag === 0x02);
        let pathLen: number | undefined;
        if (length !== undefined) {
          pathLen = 0;
          for (let i = length.start; i < length.end; i++) pathLen = pathLen * 256 + (der[i] as number);
        }
        found.basicConstraints = { ca: flag !== undefined && der[flag.start] !== 0, pathLen };
        break;
      }
      case OID_KEY_USAGE:
        found.keyUsage = bits(der, inner);
        break;
      case OID_EXT_KEY_USAGE:
        found.extKeyUsage = children(der, inner).map((node) => oid(der, node));
        break;
      case OID_NS_CERT_TYPE:
        found.nsCertType = bits(der, inner);
        break;
      default:
    }
  }
  return found;
}
