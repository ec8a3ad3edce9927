import type { X509Certificate } from 'node:crypto';
import { checkOptionKeys } from '../check-option-keys';
import { OptionsError } from '../options-error';
import type { CertificateSource, MtlsOptions } from './mtls-options';
import { parsePemCertificates } from './parse-certificates';

/** The options after checking: pins normalised, matchers compiled, CAs parsed. */
export interface ResolvedMtls {
  from: CertificateSource;
  /** Lowercase hex SHA-256 of accepted certificates. */
  fingerprints: ReadonlySet<string>;
  /** Lowercase hex SHA-256 of accepted public keys. */
  spki: ReadonlySet<string>;
  subjects: readonly ((name: string) => boolean)[];
  cas: readonly X509Certificate[];
}

const KNOWN_KEYS = ['from', 'fingerprints', 'spki', 'subjects', 'ca'] as const;
const SOURCES: readonly CertificateSource[] = [
  'socket',
  'x-forwarded-client-cert',
  'client-cert',
  'nginx',
  'aws-alb',
];
const HEX64 = /^[0-9a-f]{64}$/;

function list(value: unknown, name: string, where: string): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    throw new OptionsError('ERR_SW_MTLS', where, `mtls.${name} must be an array (got ${typeof value})`);
  }
  return value;
}

function fingerprint(value: unknown, at: string, where: string): string {
  const hex = typeof value === 'string' ? value.replace(/:/g, '').toLowerCase() : '';
  if (HEX64.test(hex)) return hex;
  throw new OptionsError(
    'ERR_SW_MTLS',
    where,
    `${at} is not a SHA-256 fingerprint: give 64 hex digits, colons allowed, as printed by "openssl x509 -noout -fingerprint -sha256 -in client.pem" (a 40-digit SHA-1 fingerprint is not accepted)`,
  );
}

function spkiHash(value: unknown, at: string, where: string): string {
  const text = typeof value === 'string' ? value.replace(/^sha256\/\//, '') : '';
  const asBase64 = /^[A-Za-z0-9+/]{43}=$/.test(text) ? Buffer.from(text, 'base64').toString('hex') : '';
  const hex = asBase64 || text.replace(/:/g, '').toLowerCase();
  if (HEX64.test(hex)) return hex;
  throw new OptionsError(
    'ERR_SW_MTLS',
    where,
    `${at} is not a SHA-256 public-key hash: give it base64 (44 characters, as Envoy's verify_certificate_spki) or as 64 hex digits`,
  );
}

function matcher(value: unknown, at: string, where: string): (name: string) => boolean {
  if (typeof value === 'string' && value !== '') return (name) => name === value;
  if (value instanceof RegExp) {
    // Without g/y a RegExp keeps no lastIndex, so one request's test cannot change the next one's.
    const pattern = new RegExp(value.source, value.flags.replace(/[gy]/g, ''));
    return (name) => pattern.test(name);
  }
  throw new OptionsError('ERR_SW_MTLS', where, `${at} must be a non-empty string or a RegExp`);
}

function authorities(value: unknown, where: string): X509Certificate[] {
  if (value === undefined) return [];
  const texts = typeof value === 'string' ? [value] : list(value, 'ca', where);
  return texts.flatMap((text, index) => {
    const at = typeof value === 'string' ? 'mtls.ca' : `mtls.ca[${index}]`;
    if (typeof text !== 'string' || /PRIVATE KEY-----/.test(text)) {
      throw new OptionsError(
        'ERR_SW_MTLS',
        where,
        `${at} must be PEM certificate text (and never a private key)`,
      );
    }
    let certs: X509Certificate[];
    try {
      certs = parsePemCertificates(text);
    } catch (error) {
      throw new OptionsError('ERR_SW_MTLS', where, `${at} cannot be read: ${(error as Error).message}`);
    }
    for (const cert of certs) {
      if (!cert.ca) {
        throw new OptionsError(
          'ERR_SW_MTLS',
          where,
          `${at} holds a certificate that is not a CA (${cert.subject.replace(/\n/g, ', ')}); pin a leaf certificate with mtls.fingerprints instead`,
        );
      }
    }
    return certs;
  });
}

/** Checks the `mtls` options once, at construction; throws `OptionsError` saying what to change. */
export function resolveMtlsOptions(options: MtlsOptions, where: string): ResolvedMtls {
  if (options === null || typeof options !== 'object') {
    throw new OptionsError('ERR_SW_MTLS', where, 'mtls must be an object such as { fingerprints: [...] }');
  }
  checkOptionKeys(options, KNOWN_KEYS, `${where} mtls`);
  const from = options.from ?? 'socket';
  if (!SOURCES.includes(from)) {
    throw new OptionsError(
      'ERR_SW_MTLS',
      where,
      `mtls.from must be one of ${SOURCES.map((s) => `'${s}'`).join(', ')} (got ${JSON.stringify(from)})`,
    );
  }
  const resolved: ResolvedMtls = {
    from,
    fingerprints: new Set(
      list(options.fingerprints, 'fingerprints', where).map((v, i) =>
        fingerprint(v, `mtls.fingerprints[${i}]`, where),
      ),
    ),
    spki: new Set(list(options.spki, 'spki', where).map((v, i) => spkiHash(v, `mtls.spki[${i}]`, where))),
    subjects: list(options.subjects, 'subjects', where).map((v, i) =>
      matcher(v, `mtls.subjects[${i}]`, where),
    ),
    cas: authorities(options.ca, where),
  };
  const { fingerprints, spki, subjects, cas } = resolved;
  if (fingerprints.size + spki.size + subjects.length + cas.length === 0) {
    throw new OptionsError(
      'ERR_SW_MTLS',
      where,
      'mtls needs at least one of fingerprints, spki, subjects or ca: without one any certificate would pass',
    );
  }
  return resolved;
}
