import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClientCertificateVerifier } from '../lib/mtls';
import { createTestCertificates } from '../lib/testing';
import { describeWithServer, findBinary } from './support/server-binary';

const openssl = findBinary('openssl', ['/usr/bin', '/usr/local/bin']);
const describeWithOpenssl = describeWithServer(
  openssl !== undefined,
  'openssl',
  'install it (Debian: apt-get install openssl) or run CI=true to make this a failure',
);

/** Certificates made by the openssl CLI itself: name → [extensions, issuer (none: self-signed)]. */
const CERTS: [string, string, string?][] = [
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

describeWithOpenssl('chains judged as `openssl verify -purpose sslclient` judges them', () => {
  let dir: string;
  const pem = (name: string) => readFileSync(path.join(dir, `${name}.pem`), 'utf8');
  const run = (args: string[]) =>
    execFileSync(openssl as string, args, { cwd: dir, stdio: 'pipe', timeout: 20_000 });

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sw-openssl-chains-'));
    for (const [name, extensions, issuer] of CERTS) {
      writeFileSync(
        path.join(dir, `${name}.ext`),
        `[req]\ndistinguished_name=dn\n[dn]\n[x]\n${extensions}\n`,
      );
      run(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${name}.key`]);
      if (issuer === undefined) {
        run([
          'req',
          '-new',
          '-x509',
          '-key',
          `${name}.key`,
          '-subj',
          `/CN=${name}`,
          '-days',
          '30',
          '-out',
          `${name}.pem`,
          '-config',
          `${name}.ext`,
          '-extensions',
          'x',
        ]);
      } else {
        run([
          'req',
          '-new',
          '-key',
          `${name}.key`,
          '-subj',
          `/CN=${name}`,
          '-out',
          `${name}.csr`,
          '-config',
          `${name}.ext`,
        ]);
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
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function opensslAccepts(leaf: string, ca: string, intermediates: string[]): boolean {
    const args = ['verify', '-purpose', 'sslclient', '-CAfile', `${ca}.pem`];
    if (intermediates.length > 0) {
      writeFileSync(path.join(dir, 'untrusted.pem'), intermediates.map(pem).join(''));
      args.push('-untrusted', 'untrusted.pem');
    }
    try {
      run([...args, `${leaf}.pem`]);
      return true;
    } catch {
      return false;
    }
  }

  function oursAccepts(leaf: string, ca: string, intermediates: string[]): boolean {
    // A proxy that checks nothing (ALB passthrough): mtls.ca is the only chain check. A CA that could
    // never sign (Node's X509_check_ca says no) is refused sooner, when the receiver is built.
    let verifier: ReturnType<typeof createClientCertificateVerifier>;
    try {
      verifier = createClientCertificateVerifier({ from: 'aws-alb', ca: pem(ca) }, 'test');
    } catch (error) {
      expect((error as Error).message).toMatch(/mtls.ca holds a certificate that is not a CA/);
      return false;
    }
    const chain = encodeURIComponent([leaf, ...intermediates].map(pem).join(''))
      .replace(/%2B/g, '+')
      .replace(/%2F/g, '/')
      .replace(/%3D/g, '=');
    const check = verifier.check({
      header: (name) => (name === 'x-amzn-mtls-clientcert' ? chain : undefined),
      socket: undefined,
    });
    return check.ok;
  }

  it.each(TABLE)('%s: the same verdict as openssl', (_name, leaf, ca, intermediates) => {
    expect(oursAccepts(leaf, ca, intermediates)).toBe(opensslAccepts(leaf, ca, intermediates));
  });

  it('the table holds both verdicts, so agreeing means something', () => {
    const verdicts = TABLE.map(([, leaf, ca, intermediates]) => opensslAccepts(leaf, ca, intermediates));
    expect(verdicts.filter(Boolean).length).toBeGreaterThanOrEqual(5);
    expect(verdicts.filter((ok) => !ok).length).toBeGreaterThanOrEqual(10);
  });

  it('refuses a serverAuth-only certificate over real TLS (rejectUnauthorized: false, mtls.ca)', async () => {
    const server = await createTestCertificates();
    const verifier = createClientCertificateVerifier({ from: 'socket', ca: pem('root') }, 'test');
    const tls = https.createServer(
      { key: server.server.key, cert: server.server.cert, requestCert: true, rejectUnauthorized: false },
      (req, res) => {
        const check = verifier.check({ header: () => undefined, socket: req.socket });
        res.writeHead(check.ok ? 200 : check.status).end(check.ok ? 'ok' : check.slug);
      },
    );
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    const send = (leaf: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = https.request(
          {
            host: '127.0.0.1',
            port: (tls.address() as AddressInfo).port,
            method: 'POST',
            ca: server.ca.cert,
            servername: 'localhost',
            checkServerIdentity: () => undefined,
            cert: pem(leaf),
            key: readFileSync(path.join(dir, `${leaf}.key`), 'utf8'),
            agent: false,
            timeout: 5_000,
          },
          (res) => {
            let body = '';
            res.on('data', (chunk: Buffer) => (body += chunk.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end();
      });
    try {
      expect(await send('leaf_server')).toEqual({ status: 403, body: 'untrusted-client-certificate' });
      expect(await send('leaf_direct')).toEqual({ status: 200, body: 'ok' });
    } finally {
      tls.closeAllConnections();
      await new Promise((resolve) => tls.close(resolve));
    }
  });
});
