import https from 'node:https';
import type { ConnectionOptions } from 'node:tls';
import { nodeBody } from '../adapters/incoming-message/node-body';
import type { EmulatorTls } from './emulator-tls';
import type { OutboundResult } from './emulator-types';

const ANSWER_LIMIT = 64 * 1024;
const KEPT_ANSWER = 8 * 1024;

const UNTRUSTED_SERVER =
  "the receiver's server certificate is not issued by a CA the emulator trusts; pass that CA as createEmulator({ mtls: { ca } })";
const REASONS: Record<string, string> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: UNTRUSTED_SERVER,
  UNABLE_TO_GET_ISSUER_CERT: UNTRUSTED_SERVER,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: UNTRUSTED_SERVER,
  SELF_SIGNED_CERT_IN_CHAIN: UNTRUSTED_SERVER,
  DEPTH_ZERO_SELF_SIGNED_CERT: UNTRUSTED_SERVER,
  CERT_HAS_EXPIRED: "the receiver's server certificate has expired",
  CERT_NOT_YET_VALID: "the receiver's server certificate is not valid yet",
  ERR_TLS_CERT_ALTNAME_INVALID: "the receiver's server certificate does not name the webhook URL's host",
  ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    "the receiver requires a client certificate; the emulator presents one only to webhooks whose authMethod is 'mtls'",
  ERR_SSL_WRONG_VERSION_NUMBER:
    'the receiver does not speak TLS on this port (an http:// server behind an https:// URL?)',
  EPROTO: 'the receiver does not speak TLS on this port (an http:// server behind an https:// URL?)',
  ECONNRESET:
    'the receiver closed the connection during or right after the TLS handshake, as a server does when it refuses the client certificate; pin emulator.clientCertificate or trust its CA',
};

/** A TLS failure as a person reads it: what went wrong and what to do, then the code. */
function tlsFailureReason(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  if (code !== undefined && REASONS[code] !== undefined) return `TLS: ${REASONS[code]} (${code})`;
  if (code?.startsWith('ERR_SSL_') && code.includes('ALERT')) {
    const alert = code
      .replace(/^ERR_SSL_(SSLV3|TLSV1|TLSV13)_ALERT_/, '')
      .toLowerCase()
      .replace(/_/g, ' ');
    return `TLS: the receiver refused the emulator's client certificate (alert: ${alert}); pin emulator.clientCertificate or trust its CA (${code})`;
  }
  return code ?? message ?? String(error);
}

/**
 * POSTs over TLS with node:https, trusting `tls.ca` (and the system's CAs), presenting the client
 * certificate when `present`; the whole attempt, handshake included, is bounded by `timeoutMs`.
 */
export function postOverTls(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  tls: EmulatorTls,
  present: boolean,
): Promise<OutboundResult> {
  const fail = (error: string): OutboundResult => ({
    status: null,
    error,
    body: null,
    text: null,
    headers: {},
  });
  const secureContext = present ? tls.contexts.withClient : tls.contexts.plain;
  if (secureContext === null) {
    return Promise.resolve(fail(`the emulator has no client certificate to present: ${tls.missing ?? ''}`));
  }
  return new Promise((resolve) => {
    // node:https hands the options to tls.connect, which takes a prepared secureContext.
    const options: https.RequestOptions & ConnectionOptions = {
      method: 'POST',
      headers,
      agent: false,
      secureContext,
    };
    const req = https.request(url, options);
    const timer = setTimeout(
      () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })),
      timeoutMs,
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(fail(error.code === 'TIMEOUT' ? `timed out after ${timeoutMs} ms` : tlsFailureReason(error)));
    });
    req.on('response', (res) => {
      // An answer cut short errors after the read below has settled: nothing more to do with it.
      res.on('error', () => undefined);
      // A receiver's answer is only read to show it and to check a handshake echo: one too large,
      // cut short or too slow shows nothing, as over fetch.
      void nodeBody(res)
        .read(ANSWER_LIMIT, timeoutMs)
        .then(
          (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
          () => {
            res.destroy();
            return '';
          },
        )
        .then((text) => {
          clearTimeout(timer);
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: kept as text
          }
          const answerHeaders: Record<string, string> = {};
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined) answerHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
          }
          resolve({
            status: res.statusCode ?? null,
            error: null,
            body: parsed,
            text: text.slice(0, KEPT_ANSWER),
            headers: answerHeaders,
          });
        });
    });
    req.end(body);
  });
}
