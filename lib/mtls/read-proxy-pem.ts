import type { X509Certificate } from 'node:crypto';
import { parsePemCertificates, percentDecode } from './parse-certificates';
import { boundedHeader, unreadable, type PresentedCertificate } from './presented-certificate';

const PRINTABLE = /[^\x20-\x7e]/g;

/** A URL-encoded PEM header (leaf first, then any intermediates) as nginx and AWS ALB send it. */
function readEncodedPem(value: string, name: string, tlsVerified: boolean): PresentedCertificate {
  try {
    // decodeURIComponent leaves "+" as it is: ALB does not escape "+ = /", and they are base64 here.
    const [leaf, ...intermediates] = parsePemCertificates(percentDecode(value));
    return { kind: 'certificate', leaf: leaf as X509Certificate, intermediates, tlsVerified };
  } catch (error) {
    return unreadable(name, (error as Error).message);
  }
}

/**
 * nginx: `X-SSL-Client-Cert` carries `$ssl_client_escaped_cert`, `X-SSL-Client-Verify` carries
 * `$ssl_client_verify`, which must be `SUCCESS` (nginx checked the chain against
 * `ssl_client_certificate`).
 */
export function readNginx(header: (name: string) => string | undefined): PresentedCertificate {
  const cert = boundedHeader(header('x-ssl-client-cert'), 'X-SSL-Client-Cert');
  if (typeof cert === 'object') return cert;
  const verify = header('x-ssl-client-verify')?.trim();
  if (verify?.startsWith('FAILED')) {
    return {
      kind: 'refused',
      slug: 'unverified-client-certificate',
      detail: `nginx did not verify the client certificate (${verify.slice(0, 200).replace(PRINTABLE, '?')}).`,
    };
  }
  if (cert === undefined || cert.trim() === '') {
    return { kind: 'absent', detail: 'No X-SSL-Client-Cert header: nginx forwarded no client certificate.' };
  }
  if (verify !== 'SUCCESS') {
    return {
      kind: 'refused',
      slug: 'unverified-client-certificate',
      detail: `X-SSL-Client-Verify is ${verify === undefined ? 'missing' : 'not SUCCESS'}; forward nginx's $ssl_client_verify with "proxy_set_header X-SSL-Client-Verify $ssl_client_verify;".`,
    };
  }
  return readEncodedPem(cert, 'X-SSL-Client-Cert', true);
}

/**
 * AWS ALB: in passthrough mode `X-Amzn-Mtls-Clientcert` carries the whole chain the client sent
 * (unverified); in verify mode `X-Amzn-Mtls-Clientcert-Leaf` carries the leaf the ALB verified
 * against its trust store. The ALB sends one or the other, never both: both at once means a client
 * wrote one of them, so the request is refused rather than one of them being believed.
 */
export function readAwsAlb(header: (name: string) => string | undefined): PresentedCertificate {
  const passthrough = boundedHeader(header('x-amzn-mtls-clientcert'), 'X-Amzn-Mtls-Clientcert');
  if (typeof passthrough === 'object') return passthrough;
  const leaf = boundedHeader(header('x-amzn-mtls-clientcert-leaf'), 'X-Amzn-Mtls-Clientcert-Leaf');
  if (typeof leaf === 'object') return leaf;
  const hasPassthrough = passthrough !== undefined && passthrough.trim() !== '';
  const hasLeaf = leaf !== undefined && leaf.trim() !== '';
  if (hasPassthrough && hasLeaf) {
    return {
      kind: 'refused',
      slug: 'ambiguous-client-certificate',
      detail:
        'Both X-Amzn-Mtls-Clientcert (passthrough mode) and X-Amzn-Mtls-Clientcert-Leaf (verify mode) were forwarded; the load balancer sends only one, so one was written by the client. Make the load balancer the only route to this receiver.',
    };
  }
  if (hasLeaf) return readEncodedPem(leaf, 'X-Amzn-Mtls-Clientcert-Leaf', true);
  if (hasPassthrough) return readEncodedPem(passthrough, 'X-Amzn-Mtls-Clientcert', false);
  return {
    kind: 'absent',
    detail: 'No X-Amzn-Mtls-Clientcert header: the load balancer forwarded no client certificate.',
  };
}
