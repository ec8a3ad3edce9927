export { createClientCertificateVerifier } from './create-client-certificate-verifier';
export { CERTIFICATE_HEADERS } from './certificate-headers';
export type {
  CertificateCheck,
  CertificateRequest,
  CertificateSource,
  ClientCertificateVerifier,
  MtlsOptions,
} from './mtls-options';
