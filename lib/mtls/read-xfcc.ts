import { nodeCrypto } from '../lazy-crypto';
import { parsePemCertificates, percentDecode } from './parse-certificates';
import { boundedHeader, unreadable, type PresentedCertificate } from './presented-certificate';

const NAME = 'x-forwarded-client-cert';

/** A key: letters (Envoy's are By, Hash, Cert, Chain, Subject, URI, DNS), compared case-insensitively. */
const KEY = /^[A-Za-z][A-Za-z0-9_-]*$/;
/** Keys Envoy may repeat in one element: one pair per SAN of the proxy's or the client's certificate. */
const REPEATABLE = new Set(['by', 'uri', 'dns']);

function shown(text: string): string {
  return JSON.stringify(text.length > 20 ? `${text.slice(0, 20)}…` : text);
}

/**
 * Splits an XFCC value into elements of key/value pairs by Envoy's grammar, and nothing looser:
 * elements separated by `,` (optionally followed by spaces, as when a second header line is joined),
 * pairs by `;`, each `key=value`; a value holding `,;="` is double-quoted, with `\"` for a quote.
 * A quote must open a value and close it right before `;`, `,` or the end; a stray or unterminated
 * quote, a duplicate key, an empty element or a pair without `=` throws. Lenient parsing is what let
 * a client's unclosed quote swallow the proxy's element and make its own forged element the last.
 */
export function parseXfcc(value: string): Map<string, string>[] {
  const elements: Map<string, string>[] = [];
  const n = value.length;
  let i = 0;
  for (;;) {
    while (value[i] === ' ' || value[i] === '\t') i++;
    const pairs = new Map<string, string>();
    for (;;) {
      const eq = value.indexOf('=', i);
      const key = eq === -1 ? value.slice(i) : value.slice(i, eq);
      if (eq === -1 || !KEY.test(key)) throw new Error(`${shown(key)} is not a key followed by "="`);
      const name = key.toLowerCase();
      if (pairs.has(name) && !REPEATABLE.has(name)) throw new Error(`${key} appears twice in one element`);
      i = eq + 1;
      let text = '';
      if (value[i] === '"') {
        for (i++; ; i++) {
          if (i >= n) throw new Error('a quoted value is not closed');
          const c = value[i] as string;
          if (c === '"') break;
          if (c === '\\' && value[i + 1] === '"') text += value[++i];
          else text += c;
        }
        i++;
        if (i < n && value[i] !== ';' && value[i] !== ',')
          throw new Error(`a quoted value of ${key} is followed by ${shown(value.slice(i))}, not ";" or ","`);
      } else {
        const start = i;
        while (i < n && value[i] !== ';' && value[i] !== ',') {
          if (value[i] === '"' || value[i] === '=')
            throw new Error(`the value of ${key} holds an unquoted ${value[i]}`);
          i++;
        }
        text = value.slice(start, i);
      }
      if (!pairs.has(name)) pairs.set(name, text);
      if (i >= n) {
        elements.push(pairs);
        return elements;
      }
      if (value[i++] === ',') break;
    }
    elements.push(pairs);
  }
}

/**
 * Envoy's `x-forwarded-client-cert`. Each proxy appends its element at the end, so the rightmost one
 * was written by the proxy in front of us; elements to its left came from farther away, and a
 * client can forge those when the proxy appends (`APPEND_FORWARD`) instead of replacing
 * (`SANITIZE_SET`). Only the rightmost element is read, and only from a header that parses strictly
 * as a whole: a client's bytes cannot reach into the proxy's element.
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
    // Envoy always writes Hash beside Cert; requiring it to match ties the element together.
    const hash = element.get('hash');
    if (hash === undefined) return unreadable(NAME, 'its last element has no Hash beside its Cert');
    if (hash.toLowerCase() !== nodeCrypto().createHash('sha256').update(leaf.raw).digest('hex')) {
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
