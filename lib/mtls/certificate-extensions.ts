import type { X509Certificate } from 'node:crypto';
import { GENERAL_NAME, readGeneralName, type GeneralName } from './general-name';
import { children, oid, tlv, unsigned, type Tlv } from './read-der';
import { readName, type NameAttribute } from './read-name';

/** One permitted or excluded subtree of a nameConstraints extension. */
export interface Subtree {
  base: GeneralName;
  /** minimum 0 and no maximum: the only form RFC 5280 allows and OpenSSL takes. */
  minMaxValid: boolean;
}

/** What a chain is judged by, read from the DER: Node's X509Certificate exposes none of it. */
export interface CertificateExtensions {
  /** basicConstraints: absent, or `cA` with its `pathLenConstraint` (undefined when unbounded). */
  basicConstraints: { ca: boolean; pathLen: number | undefined } | undefined;
  /** keyUsage as a bit mask (bit 0 = digitalSignature is 1 << 0), or undefined when absent. */
  keyUsage: number | undefined;
  /** extendedKeyUsage OIDs in dotted form, or undefined when absent. */
  extKeyUsage: string[] | undefined;
  /** Netscape's nsCertType as a bit mask (bit 0 = SSL client), or undefined when absent. */
  nsCertType: number | undefined;
  /** subjectAltName's names; empty when absent. */
  altNames: GeneralName[];
  /** nameConstraints, or undefined when absent. */
  nameConstraints: { permitted: Subtree[]; excluded: Subtree[] } | undefined;
  /** The OIDs of critical extensions OpenSSL's verifier does not handle, so refuses. */
  unhandledCritical: string[];
  /** The subject's RDNs. */
  subject: NameAttribute[][];
  /** The subject as a directoryName, as name constraints compare it. */
  subjectName: GeneralName;
}

export const KEY_USAGE = { digitalSignature: 1 << 0, keyAgreement: 1 << 4, keyCertSign: 1 << 5 } as const;
export const NS_SSL_CLIENT = 1 << 0;
export const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

const OID_BASIC_CONSTRAINTS = '2.5.29.19';
const OID_KEY_USAGE = '2.5.29.15';
const OID_EXT_KEY_USAGE = '2.5.29.37';
const OID_NS_CERT_TYPE = '2.16.840.1.113730.1.1';
const OID_SUBJECT_ALT_NAME = '2.5.29.17';
const OID_NAME_CONSTRAINTS = '2.5.29.30';

/** The extensions OpenSSL's verifier acts on (v3_purp.c's X509_supported_extension): critical ones elsewhere fail. */
const HANDLED = new Set([
  OID_NS_CERT_TYPE,
  OID_KEY_USAGE,
  OID_SUBJECT_ALT_NAME,
  OID_BASIC_CONSTRAINTS,
  '2.5.29.32', // certificatePolicies
  '2.5.29.31', // cRLDistributionPoints
  OID_EXT_KEY_USAGE,
  '1.3.6.1.5.5.7.1.7', // sbgp-ipAddrBlock
  '1.3.6.1.5.5.7.1.8', // sbgp-autonomousSysNum
  '1.3.6.1.5.5.7.48.1.5', // OCSP noCheck
  '2.5.29.36', // policyConstraints
  '1.3.6.1.5.5.7.1.14', // proxyCertInfo
  OID_NAME_CONSTRAINTS,
  '2.5.29.33', // policyMappings
  '2.5.29.54', // inhibitAnyPolicy
]);

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

/** GeneralSubtrees: base, minimum [0] DEFAULT 0, maximum [1] OPTIONAL. */
function subtrees(der: Buffer, list: Tlv | undefined): Subtree[] {
  if (list === undefined) return [];
  return children(der, list).map((subtree) => {
    const [base, ...bounds] = children(der, subtree);
    if (base === undefined) throw new Error('empty GeneralSubtree');
    const minimum = bounds.find((node) => node.tag === 0x80);
    const maximum = bounds.find((node) => node.tag === 0x81);
    return {
      base: readGeneralName(der, base),
      minMaxValid: maximum === undefined && (minimum === undefined || unsigned(der, minimum) === 0),
    };
  });
}

/** Reads a certificate's subject and extensions from its DER (tbsCertificate → [3] extensions). */
export function certificateExtensions(cert: X509Certificate): CertificateExtensions {
  const der = cert.raw;
  const certificate = tlv(der, 0, der.length);
  const tbs = children(der, certificate)[0];
  if (tbs === undefined) throw new Error('no tbsCertificate');
  const fields = children(der, tbs);
  // version [0] is optional; serial, signature, issuer and validity come before the subject.
  const subject = fields[fields[0]?.tag === 0xa0 ? 5 : 4];
  if (subject === undefined) throw new Error('no subject');
  const found: CertificateExtensions = {
    basicConstraints: undefined,
    keyUsage: undefined,
    extKeyUsage: undefined,
    nsCertType: undefined,
    altNames: [],
    nameConstraints: undefined,
    unhandledCritical: [],
    subject: readName(der, subject),
    subjectName: { type: GENERAL_NAME.directoryName, value: der.subarray(subject.at, subject.end) },
  };
  const wrapper = fields.find((node) => node.tag === 0xa3);
  if (wrapper === undefined) return found;
  const [list] = children(der, wrapper);
  if (list === undefined) return found;
  for (const extension of children(der, list)) {
    const parts = children(der, extension);
    const id = parts[0];
    const value = parts.at(-1);
    if (id === undefined || value === undefined || value.tag !== 0x04) continue;
    const flag = parts.length === 3 ? parts[1] : undefined;
    const critical = flag?.tag === 0x01 && der[flag.start] !== 0;
    const inner = tlv(der, value.start, value.end);
    const name = oid(der, id);
    if (critical && !HANDLED.has(name)) found.unhandledCritical.push(name);
    switch (name) {
      case OID_BASIC_CONSTRAINTS: {
        const fields = children(der, inner);
        const flag = fields.find((node) => node.tag === 0x01);
        const length = fields.find((node) => node.tag === 0x02);
        found.basicConstraints = {
          ca: flag !== undefined && der[flag.start] !== 0,
          pathLen: length === undefined ? undefined : unsigned(der, length),
        };
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
      case OID_SUBJECT_ALT_NAME:
        found.altNames = children(der, inner).map((node) => readGeneralName(der, node));
        break;
      case OID_NAME_CONSTRAINTS: {
        const parts = children(der, inner);
        found.nameConstraints = {
          permitted: subtrees(
            der,
            parts.find((node) => node.tag === 0xa0),
          ),
          excluded: subtrees(
            der,
            parts.find((node) => node.tag === 0xa1),
          ),
        };
        break;
      }
      default:
    }
  }
  return found;
}
