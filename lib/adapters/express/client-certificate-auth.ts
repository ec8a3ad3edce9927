import type { ExpressMiddleware } from './express-types';
import { certificateProblem } from '../../core/auth/certificate-step';
import { createClientCertificateVerifier } from '../../lazy-mtls';
import type { MtlsOptions } from '../../mtls/mtls-options';

/** Options of {@link clientCertificateAuth}: the receiver's `mtls` option, {@link MtlsOptions}. */
export type ClientCertificateAuthOptions = MtlsOptions;

/**
 * Step 2 for webhooks with `auth_method: 'mtls'`, in place of (or after) `bearerAuth`: refuses a
 * request without an allowed client certificate, 401 when none was presented and 403 when it is not
 * allowed, before a byte of its body is read. The problem names the certificate's fingerprint and
 * subject; `problemHandler()` answers it.
 */
export function clientCertificateAuth(options: ClientCertificateAuthOptions): ExpressMiddleware {
  const verifier = createClientCertificateVerifier(options, 'clientCertificateAuth');
  return function clientCertificateAuth(req, _res, next) {
    const check = verifier.check({
      header: (name) => {
        const value = req.headers[name];
        return Array.isArray(value) ? value.join(', ') : value;
      },
      socket: req.socket,
    });
    next(check.ok ? undefined : certificateProblem(check));
  };
}
