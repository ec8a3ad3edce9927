import { createCheckCache } from './check-cache';
import { untrustedHeaders } from './certificate-headers';
import { judgeCertificate } from './judge-certificate';
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
import { resolveMtlsOptions } from './resolve-mtls-options';

const READERS: Record<CertificateSource, (request: CertificateRequest) => PresentedCertificate> = {
  socket: (request) => readSocketCertificate(request.socket),
  'x-forwarded-client-cert': (request) => readXfcc(request.header),
  'client-cert': (request) => readClientCert(request.header),
  nginx: (request) => readNginx(request.header),
  'aws-alb': (request) => readAwsAlb(request.header),
};

const UNCHECKABLE = {
  ok: false,
  status: 403,
  slug: 'unreadable-client-certificate',
  detail: 'The client certificate could not be checked (an unsupported key or signature algorithm?).',
} as const;

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
        try {
          check = judgeCertificate(mtls, leaf, intermediates, tlsVerified ?? false, now);
        } catch {
          // A key type or extension OpenSSL cannot work with: refused, never a 500 and never a pass.
          check = { ...UNCHECKABLE, fingerprint: leaf.fingerprint256 };
        }
        validTo = Date.parse(leaf.validTo);
      }
      if (key !== undefined) cache.set(key, check, now, validTo);
      return check;
    },
  };
}
