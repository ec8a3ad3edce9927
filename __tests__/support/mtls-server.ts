import https from 'node:https';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestCertificates } from 'service-webhooks/testing';
import type { CertificateCheck, ClientCertificateVerifier } from '../../lib/mtls';

/** A server whose every answer is the verifier's verdict: status, and the check as JSON. */
function answer(verifier: ClientCertificateVerifier): http.RequestListener {
  return (req, res) => {
    const check: CertificateCheck = verifier.check({
      header: (name) => {
        const value = req.headers[name];
        return Array.isArray(value) ? value.join(', ') : value;
      },
      socket: req.socket,
    });
    res.writeHead(check.ok ? 200 : check.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(check));
  };
}

export interface Started {
  url: string;
  port: number;
  close(): Promise<void>;
}

async function start(server: http.Server): Promise<Started> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const scheme = server instanceof https.Server ? 'https' : 'http';
  return {
    url: `${scheme}://127.0.0.1:${port}/`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An HTTPS server asking for a client certificate, refusing none at the handshake. */
export function startTlsVerifierServer(
  certs: TestCertificates,
  verifier: ClientCertificateVerifier,
): Promise<Started> {
  const server = https.createServer(
    {
      requestCert: true,
      rejectUnauthorized: false,
      ca: certs.ca.cert,
      key: certs.server.key,
      cert: certs.server.cert,
    },
    answer(verifier),
  );
  return start(server);
}

/** A plain HTTP server, as behind a proxy that terminated TLS; it takes headers up to 64 KiB. */
export function startHttpVerifierServer(verifier: ClientCertificateVerifier): Promise<Started> {
  return start(http.createServer({ maxHeaderSize: 64 * 1024 }, answer(verifier)));
}

export interface Reply {
  status: number;
  /** The verifier's check, or the text of an answer that is not one (a proxy's own error page). */
  body: CertificateCheck | { text: string };
}

/** One request, over TLS when the URL is https, presenting `cert`/`key` when given; 5 s at most. */
export function request(
  url: string,
  options: { ca?: string; cert?: string; key?: string; headers?: Record<string, string | string[]> } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const module = url.startsWith('https:') ? https : http;
    const req = module.request(
      url,
      { method: 'POST', ...options, agent: false, timeout: 5000, headers: options.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let body: Reply['body'];
          try {
            body = JSON.parse(text) as CertificateCheck;
          } catch {
            body = { text };
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out after 5000 ms')));
    req.on('error', reject);
    req.end();
  });
}
