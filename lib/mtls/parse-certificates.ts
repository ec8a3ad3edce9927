import type { X509Certificate } from 'node:crypto';
import { nodeCrypto } from '../lazy-crypto';

/** The most certificates read from one header or one `ca` string: a leaf and its intermediates. */
export const MAX_CHAIN = 8;

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * Every PEM certificate in `text`, parsed; throws (without quoting the text) when there is none, more
 * than `MAX_CHAIN`, or one that does not parse.
 */
export function parsePemCertificates(text: string): X509Certificate[] {
  const blocks = text.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0) throw new Error('it holds no PEM certificate');
  if (blocks.length > MAX_CHAIN) throw new Error(`more than ${MAX_CHAIN} certificates`);
  return blocks.map((block, index) => {
    try {
      return new (nodeCrypto().X509Certificate)(block);
    } catch {
      throw new Error(`certificate ${index + 1} is not a valid X.509 certificate`);
    }
  });
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A certificate from base64 DER (RFC 9440's byte sequences); throws when it is not one. */
export function parseBase64Der(base64: string): X509Certificate {
  if (base64.length === 0 || base64.length % 4 !== 0 || !BASE64.test(base64)) {
    throw new Error('not base64');
  }
  try {
    return new (nodeCrypto().X509Certificate)(Buffer.from(base64, 'base64'));
  } catch {
    throw new Error('not a DER X.509 certificate');
  }
}

/** Percent-decoding that leaves `+` alone (AWS ALB and nginx escape PEM that way); throws on bad escapes. */
export function percentDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new Error('not URL-encoded');
  }
}
