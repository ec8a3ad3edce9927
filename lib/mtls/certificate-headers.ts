import type { CertificateSource } from './mtls-options';

/** The headers each proxy source reads (lowercase); the nginx names are ours, set by the documented config. */
export const CERTIFICATE_HEADERS: Readonly<Record<Exclude<CertificateSource, 'socket'>, readonly string[]>> =
  {
    'x-forwarded-client-cert': ['x-forwarded-client-cert'],
    'client-cert': ['client-cert', 'client-cert-chain'],
    nginx: ['x-ssl-client-cert', 'x-ssl-client-verify'],
    'aws-alb': ['x-amzn-mtls-clientcert', 'x-amzn-mtls-clientcert-leaf'],
  };

/** The certificate headers a request must not carry when reading from `from`: anyone could have set them. */
export function untrustedHeaders(from: CertificateSource): string[] {
  return Object.entries(CERTIFICATE_HEADERS)
    .filter(([source]) => source !== from)
    .flatMap(([, names]) => names);
}
