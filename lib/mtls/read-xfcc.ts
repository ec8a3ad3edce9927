import { nodeCrypto } from '../lazy-crypto';
import { certificateFacts } from './certificate-facts';
import { parsePemCertificates, percentDecode } from './parse-certificates';
import { boundedHeader, unreadable, type PresentedCertificate } from './presented-certificate';

const NAME = 'x-forwarded-client-cert';

/**
 * Envoy's keys, and whether it quotes the value: always for Cert, Chain (URL-encoded PEM) and
 * Subject; never for By, Hash, URI and DNS, which it writes as the certificates hold them.
 */
const QUOTED = new Map([
  ['by', false],
  ['hash', false],
  ['cert', true],
  ['chain', true],
  ['subject', true],
  ['uri', false],
  ['dns', false],
]);
/** Keys Envoy may repeat in one element: one pair per SAN of the proxy's or the client's certificate. */
const REPEATABLE = new Set(['by', 'uri', 'dns']);
/** What a SAN must not hold for Envoy's unquoted URI= or DNS= to read back as written. */
const SEPARATOR = /[,;="]/;

function shown(text: string): string {
  return JSON.stringify(text.length > 20 ? `${text.slice(0, 20)}…` : text);
}

/**
 * Splits an XFCC value into elements of key/value pairs by Envoy's grammar, and nothing looser:
 * elements separated by `,` (optionally followed by spaces, as when a second header line is joined),
 * pairs by `;`, each `key=value` with one of Envoy's keys; Cert, Chain and Subject double-quoted (a
 * backslash keeps the next character, as in OpenSSL's `\"` and `\\`), the others never. A quote must
 * close right before `;`, `,` or the end; a stray or unterminated quote, an unknown or duplicate key,
 * an empty element or a pair without `=` throws. Lenient parsing is what let a client's unclosed
 * quote swallow the proxy's element and make its own forged element the last.
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
      const name = key.toLowerCase();
      const quoted = QUOTED.get(name);
      if (eq === -1 || quoted === undefined)
        throw new Error(`${shown(key)} is not one of Envoy's keys followed by "="`);
      if (pairs.has(name) && !REPEATABLE.has(name)) throw new Error(`${key} appears twice in one element`);
      i = eq + 1;
      let text = '';
      if (quoted) {
        if (value[i] !== '"') throw new Error(`the value of ${key} is not quoted, as Envoy quotes it`);
        for (i++; ; i++) {
          if (i >= n) throw new Error('a quoted value is not closed');
          const c = value[i] as string;
          if (c === '"') break;
          if (c === '\\' && i + 1 < n) text += value[++i];
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
 * Envoy's `x-forwarded-client-cert`, holding exactly one element: the one the proxy in front wrote for
 * the certificate it verified. Envoy writes one under `SANITIZE_SET`, and under `APPEND_FORWARD` too
 * as long as the client sent none, which the Service never does; a second element is a client's, or
 * a SAN's: Envoy writes URI and DNS unquoted, so a SAN holding `,` reads as an element of its own.
 * When the element holds URI (or DNS) pairs, the certificate's own URI (or DNS) names are checked for
 * `, ; = "` too, so none can add a pair; a type Envoy did not write cannot reach the header.
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
    const elements = parseXfcc(value);
    if (elements.length !== 1) {
      return unreadable(
        NAME,
        `it holds ${elements.length} elements, and Envoy writes exactly one for the certificate it verified (the Service sends none of its own); a client or a certificate's SAN wrote the others. Set forward_client_cert_details: SANITIZE_SET`,
      );
    }
    const element = elements[0] as Map<string, string>;
    const cert = element.get('cert');
    if (cert === undefined || cert === '') {
      return unreadable(
        NAME,
        "its element has no Cert; set Envoy's set_current_client_cert_details: { cert: true }",
      );
    }
    const [leaf, ...rest] = parsePemCertificates(percentDecode(cert));
    if (leaf === undefined || rest.length > 0)
      return unreadable(NAME, 'Cert must hold exactly one certificate');
    // Envoy always writes Hash beside Cert; requiring it to match ties the element together.
    const hash = element.get('hash');
    if (hash === undefined) return unreadable(NAME, 'its element has no Hash beside its Cert');
    if (hash.toLowerCase() !== nodeCrypto().createHash('sha256').update(leaf.raw).digest('hex')) {
      return unreadable(NAME, 'its Hash is not the SHA-256 of its Cert');
    }
    // Only a SAN Envoy wrote can reach the header, and it writes one only behind its type's key: with
    // no URI= (or DNS=) pair in the element (cert and chain only, as docs/mtls.md advises), that type's
    // SANs may hold anything.
    const written = (type: string) => element.has(type.toLowerCase());
    const san = certificateFacts(leaf, false).names.find(
      (name) => /^(DNS|URI):/.test(name) && written(name.slice(0, 3)) && SEPARATOR.test(name.slice(4)),
    );
    if (san !== undefined) {
      const type = san.slice(0, 3);
      return unreadable(
        NAME,
        `its certificate has a ${type} name holding ${shown(SEPARATOR.exec(san.slice(4))?.[0] ?? '')}, which Envoy writes unquoted, so the header's ${type}= pairs cannot be told from its separators; such a certificate cannot be read from XFCC`,
      );
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
