/**
 * Where the client certificate of a delivery is read from:
 * - `'socket'`: the TLS connection itself (`https.createServer({ requestCert: true, ... })`);
 * - `'x-forwarded-client-cert'`: Envoy's `x-forwarded-client-cert` header, holding the one element Envoy
 *   writes (its `Cert`, and `Chain` if sent); a second element is refused;
 * - `'client-cert'`: RFC 9440 `Client-Cert` (and `Client-Cert-Chain`);
 * - `'nginx'`: `X-SSL-Client-Cert` (`$ssl_client_escaped_cert`) with `X-SSL-Client-Verify`
 *   (`$ssl_client_verify`, which must be `SUCCESS`);
 * - `'aws-alb'`: AWS ALB's `X-Amzn-Mtls-Clientcert` (passthrough mode) or `X-Amzn-Mtls-Clientcert-Leaf`
 *   (verify mode).
 */
export type CertificateSource = 'socket' | 'x-forwarded-client-cert' | 'client-cert' | 'nginx' | 'aws-alb';

/**
 * How deliveries authenticate with a client certificate (the webhook's `auth_method: 'mtls'`).
 * At least one of `fingerprints`, `spki`, `subjects` and `ca` is required. Every option given must
 * hold: a certificate must chain to `ca` (when given), match one of `fingerprints` or `spki` (when
 * either is given, a match in either list is enough) and match one of `subjects` (when given), and be
 * within its validity dates.
 */
export interface MtlsOptions {
  /**
   * Where the certificate comes from. Defaults to `'socket'`. A header source must only be named when a
   * proxy you run sets (and overwrites) that header; a request carrying the header of a source you did
   * not name is refused with 403, never believed.
   */
  from?: CertificateSource;
  /**
   * SHA-256 fingerprints of the accepted certificates: hex, with or without colons, any case, as
   * `openssl x509 -noout -fingerprint -sha256` or `new X509Certificate(pem).fingerprint256` print them.
   * Give two during a rotation. No default.
   */
  fingerprints?: readonly string[];
  /**
   * SHA-256 hashes of the accepted public keys (DER SubjectPublicKeyInfo), base64 as Envoy's
   * `verify_certificate_spki` and curl's `sha256//…` take them, or hex. They survive a certificate
   * renewed with the same key. No default.
   */
  spki?: readonly string[];
  /**
   * Accepted names. A string must equal the certificate's Common Name, one of its subject alternative
   * names (bare, `localhost`, or typed, `DNS:localhost`, `URI:spiffe://…`), or its whole subject as
   * shown in failures (`O=Acme, CN=webhooks`); a RegExp is tested against each of these. No default.
   */
  subjects?: readonly (string | RegExp)[];
  /**
   * PEM certificate(s) of the CA(s) the client certificate must chain to (intermediates may come with
   * the certificate). A string may hold several certificates. No default.
   */
  ca?: string | readonly string[];
}

/** What a verifier needs of a request, whatever the transport. */
export interface CertificateRequest {
  /** The value of a header, by lowercase name, with repeated headers joined; undefined when absent. */
  header(name: string): string | undefined;
  /** The node TLS socket when the transport has one (`req.socket`); undefined for Fetch transports. */
  socket?: unknown;
}

/** The outcome of checking a request's client certificate; failures carry no certificate body. */
export type CertificateCheck =
  | {
      /** The certificate is allowed. */
      ok: true;
      /** Its SHA-256 fingerprint, upper-case hex with colons, as openssl prints it. */
      fingerprint: string;
      /** Its subject, as `O=Acme, CN=webhooks`. */
      subject: string;
    }
  | {
      /** The certificate is missing or not allowed. */
      ok: false;
      /** 401: no certificate was presented; 403: one was, and it is not allowed. */
      status: 401 | 403;
      /** Why, as the problem slug: `client-certificate-not-pinned`, `client-certificate-expired`, … */
      slug: string;
      /** Why, in words, naming the certificate's subject and fingerprint (never its body). */
      detail: string;
      /** The presented certificate's SHA-256 fingerprint, when one could be read. */
      fingerprint?: string;
      /** The presented certificate's subject, when one could be read. */
      subject?: string;
    };

/** Checks the client certificate of one request; built once by `createClientCertificateVerifier`. */
export interface ClientCertificateVerifier {
  /** The source the verifier reads, after defaults. */
  readonly from: CertificateSource;
  /** Reads the request's certificate from the source and checks it against every option given. */
  check(request: CertificateRequest): CertificateCheck;
}
