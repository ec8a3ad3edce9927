import { GENERAL_NAME, type GeneralName } from './general-name';
import { tlv } from './read-der';
import { canonicalRdn, readName } from './read-name';

/** How one name compares with one subtree's base; the last two are names OpenSSL refuses outright. */
export type SubtreeMatch = 'match' | 'no-match' | 'unsupported-syntax' | 'unsupported-type';

const lower = (text: string) => text.replace(/[A-Z]/g, (letter) => letter.toLowerCase());
const ascii = (bytes: Buffer) => bytes.toString('latin1');

/** dNSName: the base itself, or any name ending in `.base` (a base starting with a dot: only those). */
function dns(name: string, base: string): SubtreeMatch {
  if (base.length === 0) return 'match';
  if (name.length < base.length) return 'no-match';
  const tail = name.slice(name.length - base.length);
  if (name.length > base.length && !base.startsWith('.') && name[name.length - base.length - 1] !== '.')
    return 'no-match';
  return lower(tail) === lower(base) ? 'match' : 'no-match';
}

/** rfc822Name: a mailbox (local part compared exactly), a host, or `.domain` for any host under it. */
function email(name: string, base: string): SubtreeMatch {
  const at = name.lastIndexOf('@');
  if (at === -1) return 'unsupported-syntax';
  const baseAt = base.lastIndexOf('@');
  if (baseAt === -1 && base.startsWith('.')) {
    return name.length > base.length && lower(name.slice(name.length - base.length)) === lower(base)
      ? 'match'
      : 'no-match';
  }
  if (baseAt > 0) {
    if (base.slice(0, baseAt).includes('\0') || name.slice(0, at).includes('\0')) return 'unsupported-syntax';
    if (base.slice(0, baseAt) !== name.slice(0, at)) return 'no-match';
  }
  return lower(base.slice(baseAt + 1)) === lower(name.slice(at + 1)) ? 'match' : 'no-match';
}

/** uniformResourceIdentifier: the URI's host against a host, or `.domain` for any host under it. */
function uri(name: string, base: string): SubtreeMatch {
  const colon = name.indexOf(':');
  if (colon < 0 || name.length - colon < 3 || name[colon + 1] !== '/' || name[colon + 2] !== '/')
    return 'unsupported-syntax';
  const rest = name.slice(colon + 3);
  let end = rest.indexOf(':');
  if (end === -1) end = rest.indexOf('/');
  const host = end === -1 ? rest : rest.slice(0, end);
  if (host.length === 0) return 'unsupported-syntax';
  if (base.startsWith('.')) {
    return host.length > base.length && lower(host.slice(host.length - base.length)) === lower(base)
      ? 'match'
      : 'no-match';
  }
  return lower(host) === lower(base) ? 'match' : 'no-match';
}

/** iPAddress: the base is an address and a mask of the same family. */
function ip(name: Buffer, base: Buffer): SubtreeMatch {
  if (name.length !== 4 && name.length !== 16) return 'unsupported-syntax';
  if (base.length !== 8 && base.length !== 32) return 'unsupported-syntax';
  if (name.length * 2 !== base.length) return 'no-match';
  for (let i = 0; i < name.length; i++) {
    const mask = base[name.length + i] as number;
    if (((name[i] as number) & mask) !== ((base[i] as number) & mask)) return 'no-match';
  }
  return 'match';
}

/** directoryName: the base's RDNs begin the name's, compared as OpenSSL canonicalizes them. */
function directory(name: Buffer, base: Buffer): SubtreeMatch {
  const rdns = (der: Buffer) => readName(der, tlv(der, 0, der.length)).map(canonicalRdn);
  const mine = rdns(name);
  const theirs = rdns(base);
  if (theirs.length > mine.length) return 'no-match';
  return theirs.every((rdn, index) => rdn === mine[index]) ? 'match' : 'no-match';
}

/** Compares a name with a subtree base of the same type, as OpenSSL's v3_ncons.c does. */
export function matchSubtree(name: GeneralName, base: GeneralName): SubtreeMatch {
  switch (name.type) {
    case GENERAL_NAME.dNSName:
      return dns(ascii(name.value), ascii(base.value));
    case GENERAL_NAME.rfc822Name:
      return email(ascii(name.value), ascii(base.value));
    case GENERAL_NAME.uri:
      return uri(ascii(name.value), ascii(base.value));
    case GENERAL_NAME.iPAddress:
      return ip(name.value, base.value);
    case GENERAL_NAME.directoryName:
      return directory(name.value, base.value);
    default:
      // otherName (SmtpUTF8Mailbox included), x400Address, ediPartyName, registeredID: OpenSSL
      // refuses these when a constraint of their type applies, and so does this.
      return 'unsupported-type';
  }
}
