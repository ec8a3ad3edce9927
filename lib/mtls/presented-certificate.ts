import type { X509Certificate } from 'node:crypto';

/** What a source found on a request, before any check. */
export type PresentedCertificate =
  | { kind: 'absent'; detail: string }
  | { kind: 'refused'; slug: string; detail: string }
  | { kind: 'certificate'; leaf: X509Certificate; intermediates: X509Certificate[]; tlsVerified?: boolean };

/** The longest header value read; a certificate chain fits well within it. */
const MAX_HEADER_LENGTH = 32 * 1024;

/** A header value, or a refusal when it is longer than the bound (it is then never parsed). */
export function boundedHeader(
  value: string | undefined,
  name: string,
): string | undefined | { kind: 'refused'; slug: string; detail: string } {
  if (value === undefined || value.length <= MAX_HEADER_LENGTH) return value;
  return {
    kind: 'refused',
    slug: 'unreadable-client-certificate',
    detail: `The ${name} header is over ${MAX_HEADER_LENGTH} characters; it was not read.`,
  };
}

export function unreadable(name: string, why: string): PresentedCertificate {
  return {
    kind: 'refused',
    slug: 'unreadable-client-certificate',
    detail: `The ${name} header cannot be read as a client certificate: ${why}. Check the proxy's configuration.`,
  };
}
