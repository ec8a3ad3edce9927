import type { X509Certificate } from 'node:crypto';
import type { CertificateExtensions, Subtree } from './certificate-extensions';
import { describeInChain } from './describe-in-chain';
import { GENERAL_NAME, type GeneralName } from './general-name';
import { matchSubtree } from './match-subtree';
import { attributeText, OID_COMMON_NAME, OID_EMAIL_ADDRESS, STRING_TAG } from './read-name';

type Constraints = NonNullable<CertificateExtensions['nameConstraints']>;
type Verdict = 'ok' | 'outside' | 'excluded' | 'unsupported-syntax' | 'unsupported-type' | 'min-max';

const SMTP_UTF8_MAILBOX = '1.3.6.1.5.5.7.8.9';
/** OpenSSL's NAME_CHECK_MAX: more names × constraints than this is refused, never compared. */
const MAX_COMPARISONS = 1 << 20;

/** An SmtpUTF8Mailbox otherName is an email address to the constraints (RFC 8398 §6). */
function sameType(name: GeneralName, base: GeneralName): boolean {
  const type =
    name.type === GENERAL_NAME.otherName && name.otherNameType === SMTP_UTF8_MAILBOX
      ? GENERAL_NAME.rfc822Name
      : name.type;
  if (type !== base.type) return false;
  return type !== GENERAL_NAME.otherName || name.otherNameType === base.otherNameType;
}

/** One name against one CA's constraints: some permitted subtree of its type must hold it, no excluded one. */
function judgeName(name: GeneralName, constraints: Constraints): Verdict {
  const applicable = (subtrees: Subtree[]) => subtrees.filter((subtree) => sameType(name, subtree.base));
  const permitted = applicable(constraints.permitted);
  const excluded = applicable(constraints.excluded);
  if ([...permitted, ...excluded].some((subtree) => !subtree.minMaxValid)) return 'min-max';
  if (permitted.length > 0) {
    let inside = false;
    for (const subtree of permitted) {
      const match = matchSubtree(name, subtree.base);
      if (match === 'match') {
        inside = true;
        break;
      }
      if (match !== 'no-match') return match;
    }
    if (!inside) return 'outside';
  }
  for (const subtree of excluded) {
    const match = matchSubtree(name, subtree.base);
    if (match === 'match') return 'excluded';
    if (match !== 'no-match') return match;
  }
  return 'ok';
}

/**
 * A common name that reads as a host name (two or more labels of letters, digits, `_` and inner `-`),
 * as OpenSSL's cn2dnsid decides; undefined for any other CN, which no constraint applies to.
 */
function hostNameOf(text: string): string | undefined | 'unsupported-syntax' {
  const name = text.replace(/\0+$/, '');
  if (name.includes('\0')) return 'unsupported-syntax';
  const bytes = Buffer.from(name, 'utf8');
  let host = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = String.fromCharCode(bytes[i] as number);
    if (/[A-Za-z0-9_]/.test(c)) continue;
    const inner = i > 0 && i < bytes.length - 1;
    if (inner && c === '-') continue;
    const after = String.fromCharCode(bytes[i + 1] as number);
    if (inner && c === '.' && after !== '.' && after !== '-' && bytes[i - 1] !== 0x2d) {
      host = true;
      continue;
    }
    return undefined;
  }
  return host ? name : undefined;
}

const SHOWN = {
  [GENERAL_NAME.rfc822Name]: 'email',
  [GENERAL_NAME.dNSName]: 'DNS',
  [GENERAL_NAME.uri]: 'URI',
} as Record<number, string>;

function show(name: GeneralName): string {
  if (name.type === GENERAL_NAME.iPAddress && (name.value.length === 4 || name.value.length === 16)) {
    const parts = [...name.value];
    return `IP:${name.value.length === 4 ? parts.join('.') : (name.value.toString('hex').match(/.{4}/g) as string[]).join(':')}`;
  }
  const prefix = SHOWN[name.type];
  // A name is the sender's text: shortened, and no control character reaches a log line.
  if (prefix !== undefined)
    return `${prefix}:${name.value
      .toString('latin1')
      .slice(0, 100)
      .replace(/\p{Cc}/gu, '?')}`;
  return name.type === GENERAL_NAME.directoryName ? 'its subject' : `a name of GeneralName type ${name.type}`;
}

/** The names a CA's constraints apply to: the subject, its emailAddress attributes, the subjectAltNames. */
function namesOf(extensions: CertificateExtensions): GeneralName[] | 'unsupported-syntax' {
  const names: GeneralName[] = [];
  if (extensions.subject.length > 0) names.push(extensions.subjectName);
  for (const attribute of extensions.subject.flat()) {
    if (attribute.type !== OID_EMAIL_ADDRESS) continue;
    if (attribute.tag !== STRING_TAG.ia5) return 'unsupported-syntax';
    names.push({ type: GENERAL_NAME.rfc822Name, value: attribute.bytes });
  }
  return [...names, ...extensions.altNames];
}

function commonNameHosts(extensions: CertificateExtensions): GeneralName[] | 'unsupported-syntax' {
  const hosts: GeneralName[] = [];
  for (const attribute of extensions.subject.flat()) {
    if (attribute.type !== OID_COMMON_NAME) continue;
    const host = hostNameOf(attributeText(attribute));
    if (host === 'unsupported-syntax') return host;
    if (host !== undefined) hosts.push({ type: GENERAL_NAME.dNSName, value: Buffer.from(host, 'utf8') });
  }
  return hosts;
}

/**
 * What `openssl verify` refuses in a chain's name constraints (RFC 5280 §4.2.1.10, as x509_vfy.c's
 * check_name_constraints applies them), or undefined: each CA's constraints bind every certificate
 * below it (self-issued CAs excepted) through its subject, emailAddress attributes and subjectAltNames;
 * the client certificate's common name too, when it has no DNS subjectAltName and reads as a host name.
 * A constraint with a minimum or maximum, or a name of a type OpenSSL cannot compare, is refused.
 */
export function nameConstraintProblem(
  chain: readonly X509Certificate[],
  extensions: readonly CertificateExtensions[],
): string | undefined {
  for (let below = chain.length - 1; below >= 0; below--) {
    const cert = chain[below] as X509Certificate;
    if (below > 0 && cert.subject === cert.issuer) continue;
    const own = extensions[below] as CertificateExtensions;
    for (let above = chain.length - 1; above > below; above--) {
      const constraints = extensions[above]?.nameConstraints;
      if (constraints === undefined) continue;
      const ca = describeInChain(chain[above] as X509Certificate, above);
      const subject = describeInChain(cert, below);
      const count = own.subject.flat().length + own.altNames.length;
      if (count > 0 && constraints.permitted.length + constraints.excluded.length > MAX_COMPARISONS / count)
        return `${subject} has too many names to check against the nameConstraints of ${ca}`;
      const names = namesOf(own);
      const hosts =
        below === 0 && !own.altNames.some((name) => name.type === GENERAL_NAME.dNSName)
          ? commonNameHosts(own)
          : [];
      if (names === 'unsupported-syntax' || hosts === 'unsupported-syntax')
        return `${subject} has a name whose syntax the nameConstraints of ${ca} cannot be checked against`;
      for (const name of [...names, ...hosts]) {
        const verdict = judgeName(name, constraints);
        if (verdict === 'ok') continue;
        const shown = hosts.includes(name) ? `its common name (${show(name)})` : show(name);
        switch (verdict) {
          case 'outside':
            return `${subject} has ${shown}, outside every subtree the nameConstraints of ${ca} permit`;
          case 'excluded':
            return `${subject} has ${shown}, which the nameConstraints of ${ca} exclude`;
          case 'min-max':
            return `${ca} has a nameConstraints subtree with a minimum or maximum, which OpenSSL refuses`;
          default:
            return `${subject} has ${shown}, which the nameConstraints of ${ca} cannot be checked against`;
        }
      }
    }
  }
  return undefined;
}
