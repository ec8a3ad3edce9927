import { createHash } from 'node:crypto';
import { parsePemCertificates, percentDecode } from './parse-certificates';
import { boundedHeader, unreadable, type PresentedCertificate } from './presented-certificate';

const NAME = 'x-forwarded-client-cert';

/** Splits an XFCC value into elements of key/value pairs; quoted values may hold `,;=` and `\"`. */
export function parseXfcc(value: string): Map<string, string>[] {
  const elements: Map<string, string>[] = [];
  let pairs = new Map<string, string>();
  let key: string | undefined;
  let text = '';
  let quoted = false;
  const endPair = (): void => {
    if (key === undefined) {
      if (text.trim() !== '') throw new Error(`"${text.trim().slice(0, 20)}" has no "="`);
    } else pairs.set(key, text);
    key = undefined;
    text = '';
  };
  for (let i = 0; i < value.length; i++) {
    const c = value[i] as string;
    if (quoted) {
      if (c === '\\' && value[i + 1] === '"') text += value[++i];
      else if (c === '"') quoted = false;
      else text += c;
    } else if (c === '"' && key !== undefined && text.trim() === '') quoted = true;
    else if (c === '=' && key === undefined) [key, text] = [text.trim().toLowerCase(), ''];
    else if (c === ';' || c === ',') {
      endPair();
      if (c === ',') {
        elements.push(pairs);
        pairs = new Map();
      }
    } else text += c;
  }
  if (quoted) throw new Error('a quoted value is not closed');
  endPair();
  elements.push(pairs);
  return elements;
}

/**
 * Envoy's `x-forwarded-client-cert`. Each proxy appends its element at the end, so the rightmost one
 * was written by the proxy in front of us; elements to its left came from farther away, and a
 * client can forge those when the proxy appends (`APPEND_FORWARD`) instead of replacing
 * (`SANITIZE_SET`). Only the rightmost element is read.
 */
export function readXfcc(header: (name: string) => string | undefined): PresentedCertificate {
  const value = boundedHeader(header(NAME), NAME);
  if (typeof value === 'object') return value;
  if (value === undefined || value.trim() === '') {
    return {
      kind: 'absent',
      detail: 'No x-forwarded-client-cert header: the proxy forwarded no client certificate.',
    };
  }
  try {
    const element = parseXfcc(value).at(-1) as Map<string, string>;
    const cert = element.get('cert');
    if (cert === undefined || cert === '') {
      return unreadable(
        NAME,
        "its last element has no Cert; set Envoy's set_current_client_cert_details: { cert: true }",
      );
    }
    const [leaf, ...rest] = parsePemCertificates(percentDecode(cert));
    if (leaf === undefined || rest.length > 0)
      return unreadable(NAME, 'Cert must hold exactly one certificate');
    const hash = element.get('hash');
    if (hash !== undefined && hash.toLowerCase() !== createHash('sha256').update(leaf.raw).digest('hex')) {
      return unreadable(NAME, 'its Hash is not the SHA-256 of its Cert');
    }
    const chain = element.get('chain');
    // Envoy's Chain starts with the leaf itself.
    const intermediates = (chain === undefined ? [] : parsePemCertificates(percentDecode(chain))).filter(
      (cert) => !cert.raw.equals(leaf.raw),
    );
    return { kind: 'certificate', leaf, intermediates, tlsVerified: false };
  } catch (error) {
    return unreadable(NAME, (error as Error).message);
  }
}
