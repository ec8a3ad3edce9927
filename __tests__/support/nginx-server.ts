import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describeWithServer, findBinary, freePort, waitFor } from './server-binary';

const binary = findBinary('nginx', ['/usr/sbin', '/usr/local/sbin', '/usr/local/nginx/sbin']);

/** `describe` for a suite that needs nginx (skips loudly without it, fails in CI). */
export const describeWithNginx = describeWithServer(
  binary !== undefined,
  'nginx',
  'install it (Debian: apt-get install nginx-light or nginx) or run CI=true to make this a failure',
);

/**
 * The server block docs/mtls.md shows: nginx terminates mTLS, verifies the client certificate against
 * the CA, and forwards it URL-escaped with the verification result. Paths are the test's own.
 */
export function mtlsServerBlock(o: { port: number; upstreamPort: number; dir: string }): string {
  return `
  server {
    listen 127.0.0.1:${o.port} ssl;
    server_name localhost;

    ssl_certificate     ${o.dir}/server.pem;
    ssl_certificate_key ${o.dir}/server.key;

    # Ask for a client certificate and refuse the handshake's request without a valid one.
    ssl_client_certificate ${o.dir}/ca.pem;
    ssl_verify_client      on;
    ssl_verify_depth       2;

    location / {
      proxy_pass http://127.0.0.1:${o.upstreamPort};
      # proxy_set_header replaces whatever the client sent under these names, and an empty value
      # (no certificate) removes the header: the receiver only ever sees nginx's word.
      proxy_set_header X-SSL-Client-Cert   $ssl_client_escaped_cert;
      proxy_set_header X-SSL-Client-Verify $ssl_client_verify;
      proxy_set_header Host              $host;
      proxy_set_header X-Forwarded-Proto https;
    }
  }`;
}

export interface NginxServer {
  port: number;
  url: string;
  close(): Promise<void>;
}

/**
 * Starts Debian's nginx in the foreground on a free 127.0.0.1 port, with a generated configuration,
 * its pid, logs and temp paths in a temporary directory; TLS with `tls` (PEM), proxying to `upstreamPort`.
 */
export async function startNginx(
  tls: { ca: string; cert: string; key: string },
  upstreamPort: number,
): Promise<NginxServer> {
  if (binary === undefined) {
    throw new Error('nginx is not installed: apt-get install nginx (CI=true makes this a failure)');
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'sw-nginx-'));
  writeFileSync(path.join(dir, 'ca.pem'), tls.ca);
  writeFileSync(path.join(dir, 'server.pem'), tls.cert);
  writeFileSync(path.join(dir, 'server.key'), tls.key, { mode: 0o600 });
  for (const temp of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(path.join(dir, temp));
  const port = await freePort();
  // One process, as whoever runs the test: no worker switching to "nobody" and losing the temp dir.
  const config = `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log stderr warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${mtlsServerBlock({ port, upstreamPort, dir })}
}
`;
  writeFileSync(path.join(dir, 'nginx.conf'), config);
  let output = '';
  const child: ChildProcess = spawn(binary, ['-e', 'stderr', '-p', dir, '-c', path.join(dir, 'nginx.conf')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => void (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => void (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGQUIT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      'nginx',
      () =>
        new Promise((resolve, reject) => {
          if (child.exitCode !== null) reject(new Error(`nginx exited: ${output}`));
          const socket = net.connect(port, '127.0.0.1', () => {
            socket.destroy();
            resolve(true);
          });
          socket.on('error', () => resolve(false));
        }),
      10_000,
    );
  } catch (error) {
    await close();
    throw new Error(`${(error as Error).message}\n${output}`);
  }
  return { port, url: `https://127.0.0.1:${port}`, close };
}
