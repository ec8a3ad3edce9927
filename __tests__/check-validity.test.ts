import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { createEventRouter, createFetchHandler, createNodeHandler, type ReceiverOptions } from '../lib';
import { buildEvent, createTestCertificates, DELIVERY_HEADERS } from '../lib/testing';
import { captureLogger } from './support/capture-logger';
import { describeWithServer, findBinary } from './support/server-binary';

const openssl = findBinary('openssl', ['/usr/bin', '/usr/local/bin']);
const describeWithOpenssl = describeWithServer(
  openssl !== undefined,
  'openssl',
  'install it (Debian: apt-get install openssl) or run CI=true to make this a failure',
);

/**
 * Certificates made by the openssl CLI itself: name → [extensions (and any section they name), issuer
 * (none: self-signed), subject (default /CN=name)].
 */
const CERTS: [string, string, string?, string?][] = [
  ['root', 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign'],
  ['root0', 'basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign'],
  ['root1', 'basicConstraints=critical,CA:TRUE,pathlen:1\nkeyUsage=critical,keyCertSign'],
  [
    'root_server',
    'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\nextendedKeyUsage=serverAuth',
  ],
  ['root_nosign', 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,digitalSignature'],
  ['int', 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign', 'root'],
  ['rogue', 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign', 'root0'],
  ['int_of1', 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign', 'root1'],
  ['int0', 'basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign', 'root'],
  ['int0b', 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign', 'int0'],
  ['notca', 'basicConstraints=CA:FALSE', 'root'],
  ['nobc', 'keyUsage=critical,keyCertSign', 'root'],
  ['nocertsign', 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,digitalSignature', 'root'],
  [
    'int_server',
    'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\nextendedKeyUsage=serverAuth',
    'root',
  ],
  [
    'leaf_ok',
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth',
    'int',
  ],
  ['leaf_direct', 'basicConstraints=CA:FALSE', 'root'],
  ['leaf_rogue', 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth', 'rogue'],
  ['leaf_server', 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth', 'root'],
  ['leaf_both', 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth', 'root'],
  ['leaf_anyeku', 'basicConstraints=CA:FALSE\nextendedKeyUsage=anyExtendedKeyUsage', 'root'],
  ['leaf_ca', 'basicConstraints=CA:TRUE\nextendedKeyUsage=clientAuth', 'root'],
  ['leaf_encipher', 'basicConstraints=CA:FALSE\nkeyUsage=critical,keyEncipherment', 'root'],
  ['leaf_agree', 'basicConstraints=CA:FALSE\nkeyUsage=critical,keyAgreement', 'root'],
  ['leaf_nsserver', 'basicConstraints=CA:FALSE\nnsCertType=server', 'root'],
  ['leaf_nsclient', 'basicConstraints=CA:FALSE\nnsCertType=client,email', 'root'],
  ['leaf_notca', 'basicConstraints=CA:FALSE', 'notca'],
  ['leaf_nobc', 'basicConstraints=CA:FALSE', 'nobc'],
  ['leaf_nocertsign', 'basicConstraints=CA:FALSE', 'nocertsign'],
  ['leaf_intserver', 'basicConstraints=CA:FALSE', 'int_server'],
  ['leaf_of1', 'basicConstraints=CA:FALSE', 'int_of1'],
  ['leaf_int0b', 'basicConstraints=CA:FALSE', 'int0b'],
  ['leaf_rootserver', 'basicConstraints=CA:FALSE', 'root_server'],
  ['leaf_rootnosign', 'basicConstraints=CA:FALSE', 'root_nosign'],
  ['leaf_pl0', 'basicConstraints=CA:FALSE', 'root0'],
];

/** [what, leaf, trusted CA, intermediates the client sends]. */
const TABLE: [string, string, string, string[]][] = [
  ['a clientAuth leaf under an intermediate', 'leaf_ok', 'root', ['int']],
  ['a leaf with no extensions but basicConstraints', 'leaf_direct', 'root', []],
  ['a rogue intermediate under a pathlen:0 root', 'leaf_rogue', 'root0', ['rogue']],
  ['a pathlen:0 intermediate with a CA below it', 'leaf_int0b', 'root', ['int0b', 'int0']],
  ['one intermediate under a pathlen:1 root', 'leaf_of1', 'root1', ['int_of1']],
  ['a leaf right under a pathlen:0 root', 'leaf_pl0', 'root0', []],
  ['an extendedKeyUsage of serverAuth only', 'leaf_server', 'root', []],
  ['serverAuth and clientAuth', 'leaf_both', 'root', []],
  ['anyExtendedKeyUsage alone', 'leaf_anyeku', 'root', []],
  ['a CA:TRUE leaf with clientAuth', 'leaf_ca', 'root', []],
  ['a keyUsage of keyEncipherment only', 'leaf_encipher', 'root', []],
  ['a keyUsage of keyAgreement', 'leaf_agree', 'root', []],
  ['an nsCertType of server', 'leaf_nsserver', 'root', []],
  ['an nsCertType of client', 'leaf_nsclient', 'root', []],
  ['an intermediate that is CA:FALSE', 'leaf_notca', 'root', ['notca']],
  ['an intermediate without basicConstraints', 'leaf_nobc', 'root', ['nobc']],
  ['an intermediate whose keyUsage lacks keyCertSign', 'leaf_nocertsign', 'root', ['nocertsign']],
  ['an intermediate with serverAuth only', 'leaf_intserver', 'root', ['int_server']],
  ['a trusted root with serverAuth only', 'leaf_rootserver', 'root_server', []],
  ['a trusted root whose keyUsage lacks keyCertSign', 'leaf_rootnosign', 'root_nosign', []],
];

/** What openssl's verify says of a refused chain, and what our refusal must then say. */
const REASONS: [RegExp, RegExp][] = [[/path length constraint exceeded/, /\(pathLenConstraint\)/]];

/** The ways a receiver meets a chain: two proxy headers (through Fetch) and the TLS socket (node:http). */
const SOURCES = ['aws-alb', 'client-cert', 'socket'] as const;

describeWithOpenssl('chains judged as `openssl verify -purpose sslclient` judges them', () => {
  let dir: string;
  let tlsServer: https.Server;
  let port: number;
  let serverCa: string;
  const handled = new Map<string, string[]>();
  const pem = (name: string) => readFileSync(path.join(dir, `${name}.pem`), 'utf8');
  const run = (args: string[]) =>
    execFileSync(openssl as string, args, { cwd: dir, stdio: 'pipe', timeout: 20_000 });

  /** A receiver trusting `ca`, reading certificates from `from`; undefined when it refuses `ca` itself. */
  function receiverOptions(from: (typeof SOURCES)[number], ca: string): ReceiverOptions {
    const seen = handled.get(`${from} ${ca}`) ?? [];
    handled.set(`${from} ${ca}`, seen);
    const router = createEventRouter().on('ag.access_pass.issued', (event) => void seen.push(event.id));
    return { router, logger: captureLogger(), mtls: { from, ca: pem(ca) } };
  }

  const sockets = new Map<string, ReturnType<typeof createNodeHandler> | Error>();

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'sw-openssl-chains-'));
    for (const [name, extensions, issuer, subject] of CERTS) {
      writeFileSync(
        path.join(dir, `${name}.ext`),
        `[req]\ndistinguished_name=dn\n[dn]\n[x]\n${extensions}\n`,
      );
      run(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${name}.key`]);
      const subj = ['-subj', subject ?? `/CN=${name}`, '-key', `${name}.key`, '-config', `${name}.ext`];
      if (issuer === undefined) {
        run(['req', '-new', '-x509', ...subj, '-days', '30', '-out', `${name}.pem`, '-extensions', 'x']);
      } else {
        run(['req', '-new', ...subj, '-out', `${name}.csr`]);
        run([
          'x509',
          '-req',
          '-in',
          `${name}.csr`,
          '-CA',
          `${issuer}.pem`,
          '-CAkey',
          `${issuer}.key`,
          '-set_serial',
          String(Math.floor(Math.random() * 1e9)),
          '-days',
          '30',
          '-out',
          `${name}.pem`,
          '-extfile',
          `${name}.ext`,
          '-extensions',
          'x',
        ]);
      }
    }
    // One HTTPS server for the socket rows: a receiver per trusted CA, at /<ca>. It asks for a client
    // certificate and refuses none at the handshake (rejectUnauthorized: false), so mtls.ca decides.
    const server = await createTestCertificates();
    serverCa = server.ca.cert;
    tlsServer = https.createServer(
      { key: server.server.key, cert: server.server.cert, requestCert: true, rejectUnauthorized: false },
      (req, res) => {
        const handler = sockets.get(String(req.url).split('/')[1] ?? '');
        if (handler === undefined || handler instanceof Error) res.writeHead(404).end();
        else handler(req, res);
      },
    );
    await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
    port = (tlsServer.address() as AddressInfo).port;
  }, 120_000);
  afterAll(async () => {
    tlsServer.closeAllConnections();
    await new Promise((resolve) => tlsServer.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  function openssl_(leaf: string, ca: string, intermediates: string[]): { ok: boolean; error: string } {
    const args = ['verify', '-purpose', 'sslclient', '-CAfile', `${ca}.pem`];
    if (intermediates.length > 0) {
      writeFileSync(path.join(dir, 'untrusted.pem'), intermediates.map(pem).join(''));
      args.push('-untrusted', 'untrusted.pem');
    }
    try {
      run([...args, `${leaf}.pem`]);
      return { ok: true, error: '' };
    } catch (error) {
      return { ok: false, error: String((error as { stderr?: Buffer }).stderr) };
    }
  }

  interface Verdict {
    ok: boolean;
    detail: string;
  }

  async function viaHeader(
    from: 'aws-alb' | 'client-cert',
    leaf: string,
    ca: string,
    intermediates: string[],
  ): Promise<Verdict | Error> {
    let handler: ReturnType<typeof createFetchHandler>;
    try {
      handler = createFetchHandler(receiverOptions(from, ca));
    } catch (error) {
      return error as Error;
    }
    const der = (name: string) => `:${new X509Certificate(pem(name)).raw.toString('base64')}:`;
    const headers: Record<string, string> =
      from === 'aws-alb'
        ? {
            'x-amzn-mtls-clientcert': encodeURIComponent([leaf, ...intermediates].map(pem).join(''))
              .replace(/%2B/g, '+')
              .replace(/%2F/g, '/')
              .replace(/%3D/g, '='),
          }
        : { 'client-cert': der(leaf), 'client-cert-chain': intermediates.map(der).join(', ') };
    const event = buildEvent('ag.access_pass.issued');
    const answer = await handler(
      new Request('https://example.test/hooks', {
        method: 'POST',
        headers: { ...DELIVERY_HEADERS, ...headers },
        body: JSON.stringify(event),
      }),
    );
    return judged(from, ca, event.id, answer.status, answer.headers.get('content-type'), await answer.text());
  }

  async function viaSocket(leaf: string, ca: string, intermediates: string[]): Promise<Verdict | Error> {
    if (!sockets.has(ca)) {
      try {
        sockets.set(ca, createNodeHandler({ ...receiverOptions('socket', ca), path: `/${ca}` }));
      } catch (error) {
        sockets.set(ca, error as Error);
      }
    }
    const handler = sockets.get(ca);
    if (handler instanceof Error) return handler;
    const event = buildEvent('ag.access_pass.issued');
    const answer = await new Promise<{ status: number; type: string | undefined; text: string }>(
      (resolve, reject) => {
        const req = https.request(
          {
            host: '127.0.0.1',
            port,
            path: `/${ca}`,
            method: 'POST',
            headers: DELIVERY_HEADERS,
            ca: serverCa,
            servername: 'localhost',
            checkServerIdentity: () => undefined,
            // The client sends its intermediates after its certificate, as a TLS client does.
            cert: [leaf, ...intermediates].map(pem).join(''),
            key: readFileSync(path.join(dir, `${leaf}.key`), 'utf8'),
            agent: false,
            timeout: 5_000,
          },
          (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => (text += chunk.toString()));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], text }),
            );
          },
        );
        req.on('timeout', () => req.destroy(new Error('timed out')));
        req.on('error', reject);
        req.end(JSON.stringify(event));
      },
    );
    return judged('socket', ca, event.id, answer.status, answer.type ?? null, answer.text);
  }

  /** A receiver's answer as a verdict, holding it to "200 only when handled, 403 problem+json and not handled". */
  function judged(
    from: string,
    ca: string,
    id: string,
    status: number,
    type: string | null,
    text: string,
  ): Verdict {
    const seen = handled.get(`${from} ${ca}`) ?? [];
    if (status === 200) {
      expect(seen).toContain(id);
      return { ok: true, detail: '' };
    }
    expect(seen).not.toContain(id);
    expect(status).toBe(403);
    expect(type).toMatch(/^application\/problem\+json/);
    const problem = JSON.parse(text) as { type: string; detail: string };
    expect(problem.type).toMatch(/untrusted-client-certificate$/);
    return { ok: false, detail: problem.detail };
  }

  describe.each(SOURCES)('through a receiver reading the certificate from %s', (from) => {
    it.each(TABLE)('%s: the same verdict as openssl', async (_name, leaf, ca, intermediates) => {
      const theirs = openssl_(leaf, ca, intermediates);
      const ours =
        from === 'socket'
          ? await viaSocket(leaf, ca, intermediates)
          : await viaHeader(from, leaf, ca, intermediates);
      if (ours instanceof Error) {
        // A CA that could never sign (Node's X509_check_ca says no) is refused when the receiver is built.
        expect(ours.message).toMatch(/mtls.ca holds a certificate that is not a CA/);
        expect(theirs.ok).toBe(false);
        return;
      }
      expect(ours.ok).toBe(theirs.ok);
      for (const [said, detail] of REASONS) if (said.test(theirs.error)) expect(ours.detail).toMatch(detail);
    });
  });

  it('the table holds both verdicts and every reason, so agreeing means something', () => {
    const verdicts = TABLE.map(([, leaf, ca, intermediates]) => openssl_(leaf, ca, intermediates));
    expect(verdicts.filter((v) => v.ok).length).toBeGreaterThanOrEqual(5);
    expect(verdicts.filter((v) => !v.ok).length).toBeGreaterThanOrEqual(10);
    for (const [said] of REASONS) expect(verdicts.some((v) => said.test(v.error))).toBe(true);
  });
});
