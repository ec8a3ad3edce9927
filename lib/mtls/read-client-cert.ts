import type { X509Certificate } from 'node:crypto';
import { MAX_CHAIN, parseBase64Der } from './parse-certificates';
import { boundedHeader, unreadable, type PresentedCertificate } from './presented-certificate';

const BYTE_SEQUENCE = /^:([^:]*):$/;

function byteSequence(item: string): X509Certificate {
  const match = BYTE_SEQUENCE.exec(item.trim());
  if (match === null) throw new Error('it is not a structured-field byte sequence (":<base64 DER>:")');
  return parseBase64Der(match[1] as string);
}

/** RFC 9440: `Client-Cert` is one byte sequence (the DER leaf), `Client-Cert-Chain` a list of them. */
export function readClientCert(header: (name: string) => string | undefined): PresentedCertificate {
  const value = boundedHeader(header('client-cert'), 'Client-Cert');
  if (typeof value === 'object') return value;
  if (value === undefined || value.trim() === '') {
    return { kind: 'absent', detail: 'No Client-Cert header: the proxy forwarded no client certificate.' };
  }
  let leaf: X509Certificate;
  try {
    leaf = byteSequence(value);
  } catch (error) {
    return unreadable('Client-Cert', (error as Error).message);
  }
  const chain = boundedHeader(header('client-cert-chain'), 'Client-Cert-Chain');
  if (typeof chain === 'object') return chain;
  const items = chain === undefined || chain.trim() === '' ? [] : chain.split(',');
  if (items.length > MAX_CHAIN)
    return unreadable('Client-Cert-Chain', `it has more than ${MAX_CHAIN} certificates`);
  try {
    return { kind: 'certificate', leaf, intermediates: items.map(byteSequence), tlsVerified: false };
  } catch (error) {
    return unreadable('Client-Cert-Chain', (error as Error).message);
  }
}
