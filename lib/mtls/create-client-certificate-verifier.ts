import type { X509Certificate } from 'node:crypto';
import { certificateFacts } from './certificate-facts';
import { createCheckCache } from './check-cache';
import { untrustedHeaders } from './certificate-headers';
import { chainsTo, validityProblem } from './check-validity';
import type {
  CertificateCheck,
  CertificateRequest,
  CertificateSource,
  ClientCertificateVerifier,
  MtlsOptions,
} from './mtls-options';
import type { PresentedCertificate } from './presented-certificate';
import { readClientCert } from './read-client-cert';
import { readAwsAlb, readNginx } from './read-proxy-pem';
import { readSocketCertificate } from './read-socket-certificate';
import { readXfcc } from './read-xfcc';
import { resolveMtlsOptions, type ResolvedMtls } from './resolve-mtls-options';

const READERS: Record<CertificateSource, (request: CertificateRequest) => PresentedCertificate> = {
  socket: (request) => readSocketCertificate(request.socket),
  'x-forwarded-client-cert': (request) => readXfcc(request.header),
  'client-cert': (request) => readClientCert(request.header),
  nginx: (request) => readNginx(request.header),
  'aws-alb': (request) => readAwsAlb(request.header),
};

function judge(
  mtls: ResolvedMtls,
  leaf: X509Certificate,
  intermediates: X509Certificate[],
  tlsVerified: boolean,
  now: number,
): CertificateCheck {
  const facts = certificateFacts(leaf, mtls.spki.size > 0);
  const deny = (slug: string, detail: string): CertificateCheck => ({
    ok: false,
    status: 403,
    slug,
    detail,
    fingerprint: facts.fingerprint,
    subject: facts.subject,
  });
  const dates = validityProblem(leaf, now);
  if (dates === 'expired') {
    return deny(
      'client-certificate-expired',
      `The client certificate expired on ${new Date(leaf.validTo).toISOString()}.`,
    );
  }
  if (dates === 'not-yet-valid') {
    return deny(
      'client-certificate-not-yet-valid',
      `The client certificate is valid only from ${new Date(leaf.validFrom).toISOString()}.`,
    );
  }
  const pinned = mtls.fingerprints.size + mtls.spki.size > 0;
  if (mtls.cas.length > 0 && !chainsTo(leaf, intermediates, mtls.cas, now)) {
    return deny('untrusted-client-certificate', 'The client certificate does not chain to a CA in mtls.ca.');
  }
  if (!pinned && mtls.cas.length === 0 && !tlsVerified) {
    return deny(
      'untrusted-client-certificate',
      "Only mtls.subjects is set and nothing verified this certificate's chain: add mtls.ca or a pin, or let the TLS server (ca, rejectUnauthorized) or the proxy verify it.",
    );
  }
  if (pinned && !mtls.fingerprints.has(facts.fingerprintHex) && !mtls.spki.has(facts.spkiHex as string)) {
    return deny(
      'client-certificate-not-pinned',
      'The client certificate matches none of mtls.fingerprints and mtls.spki; if the Service rotated its certificate, add the fingerprint shown here.',
    );
  }
  if (
    mtls.subjects.length > 0 &&
    !facts.names.some((name) => mtls.subjects.some((matches) => matches(name)))
  ) {
    return deny(
      'client-certificate-subject-mismatch',
      "The client certificate's names match none of mtls.subjects.",
    );
  }
  return { ok: true, fingerprint: facts.fingerprint, subject: facts.subject };
}

/**
 * Checks client certificates against `options`, all parsed once here. `where` names the factory in
 * option errors. The check never throws for anything a request carries, and no failure quotes a
 * certificate body.
 */
export function createClientCertificateVerifier(
  options: MtlsOptions,
  where: string,
): ClientCertificateVerifier {
  const mtls = resolveMtlsOptions(options, where);
  const untrusted = untrustedHeaders(mtls.from);
  const read = READERS[mtls.from];
  const source = mtls.from === 'socket' ? 'the TLS connection' : `the ${mtls.from} header`;
  const cache = createCheckCache(mtls.from);
  return {
    from: mtls.from,
    check: function checkClientCertificate(request) {
      for (const name of untrusted) {
        if (request.header(name) === undefined) continue;
        return {
          ok: false,
          status: 403,
          slug: 'untrusted-certificate-header',
          detail: `The request carries a ${name} header, but this receiver reads client certificates from ${source}, so that header is not believed. Strip it at your proxy, or set mtls.from if your proxy sets it.`,
        };
      }
      const now = Date.now();
      const key = cache.keyOf(request);
      const known = key === undefined ? undefined : cache.get(key, now);
      if (known !== undefined) return known;
      const presented = read(request);
      if (presented.kind === 'absent') {
        return { ok: false, status: 401, slug: 'missing-client-certificate', detail: presented.detail };
      }
      let check: CertificateCheck;
      let validTo = Number.POSITIVE_INFINITY;
      if (presented.kind === 'refused') {
        check = { ok: false, status: 403, slug: presented.slug, detail: presented.detail };
      } else {
        const { leaf, intermediates, tlsVerified } = presented;
        check = judge(mtls, leaf, intermediates, tlsVerified ?? false, now);
        validTo = Date.parse(leaf.validTo);
      }
      if (key !== undefined) cache.set(key, check, now, validTo);
      return check;
    },
  };
}
