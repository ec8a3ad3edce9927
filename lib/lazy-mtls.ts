import type * as Mtls from './mtls';
import type { ClientCertificateVerifier, MtlsOptions } from './mtls/mtls-options';

let loaded: typeof Mtls | undefined;

/**
 * The mTLS code (certificate parsing, the proxies' headers, the verifier: about 32 KB bundled),
 * loaded the first time an `mtls` option or `clientCertificateAuth` needs it, so a bearer-token
 * receiver starts without parsing it. The build keeps `./mtls/index` a file of its own beside the
 * main bundle (tsup.config.ts): this file lives at the root of `lib/`, as its code does in `dist/`.
 */
function mtls(): typeof Mtls {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, by design
  loaded ??= require('./mtls/index') as typeof Mtls;
  return loaded;
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
  return mtls().createClientCertificateVerifier(options, where);
}
