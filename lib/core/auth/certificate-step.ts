import type {
  CertificateCheck,
  CertificateRequest,
  ClientCertificateVerifier,
} from '../../mtls/mtls-options';
import { HttpProblem } from '../http-problem';
import type { RateLimitedLog } from '../../rate-limited-log';

type Refusal = Extract<CertificateCheck, { ok: false }>;

/** The problem+json for a refused certificate: its fingerprint and subject, never its body. */
export function certificateProblem(check: Refusal): HttpProblem {
  const which =
    check.fingerprint === undefined
      ? ''
      : ` Certificate: ${check.subject ?? ''} (SHA-256 ${check.fingerprint}).`;
  return new HttpProblem({
    status: check.status,
    slug: check.slug,
    title: check.status === 401 ? 'Unauthorized' : 'Forbidden',
    detail: `${check.detail}${which}`,
    field: 'client certificate',
    // The body is left unread, so the connection cannot carry another request.
    closeConnection: true,
  });
}

/** The mTLS step: `undefined` for an allowed certificate, else the problem to answer. */
export type CertificateStep = (request: CertificateRequest) => HttpProblem | undefined;

/**
 * The mTLS step over a verifier built (and its options checked) at construction; a refusal is logged
 * rate-limited per reason, with the certificate's fingerprint and subject.
 */
export function certificateStep(verifier: ClientCertificateVerifier, warn: RateLimitedLog): CertificateStep {
  return function clientCertificateAuth(request) {
    const check = verifier.check(request);
    if (check.ok) return undefined;
    warn(
      'warn',
      check.slug,
      { status: check.status, fingerprint: check.fingerprint, subject: check.subject, from: verifier.from },
      `refused a delivery: ${check.detail} The Service will retry it and drop it after 6 hours.`,
    );
    return certificateProblem(check);
  };
}
