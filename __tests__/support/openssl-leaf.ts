import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestCertificate } from 'service-webhooks/testing';

/** The SANs a leaf is signed with, copied as given (as a tenant or mesh CA copies a CSR's). */
export interface LeafNames {
  commonName: string;
  dns?: readonly string[];
  uri?: readonly string[];
}

// OpenSSL's config reader strips quotes, expands `$` and cuts at `#`; a backslash keeps a byte as is.
const confValue = (text: string) => text.replace(/[\\"'$#]/g, (c) => `\\${c}`);

/**
 * A client certificate signed by `ca` with the openssl CLI, whatever bytes its SANs hold: openssl
 * checks none of them, as a CA that copies a CSR's SANs does not. Each openssl run is bounded (10 s).
 */
export function opensslLeaf(openssl: string, ca: TestCertificate, names: LeafNames): TestCertificate {
  const dir = mkdtempSync(path.join(tmpdir(), 'sw-leaf-'));
  const file = (name: string) => path.join(dir, name);
  const run = (args: string[]) => execFileSync(openssl, args, { cwd: dir, timeout: 10_000, stdio: 'pipe' });
  try {
    writeFileSync(file('ca.pem'), ca.cert);
    writeFileSync(file('ca.key'), ca.key);
    const sans = [
      ...(names.dns ?? []).map((value, i) => `DNS.${i + 1} = ${confValue(value)}`),
      ...(names.uri ?? []).map((value, i) => `URI.${i + 1} = ${confValue(value)}`),
    ];
    writeFileSync(
      file('ext.cnf'),
      [
        '[leaf]',
        'basicConstraints = CA:FALSE',
        'keyUsage = critical, digitalSignature',
        'extendedKeyUsage = clientAuth',
        ...(sans.length > 0 ? ['subjectAltName = @sans', '[sans]', ...sans] : []),
        '',
      ].join('\n'),
    );
    run(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'leaf.key']);
    run([
      'req',
      '-new',
      '-key',
      'leaf.key',
      '-subj',
      `/CN=${names.commonName.replace(/[\\/]/g, (c) => `\\${c}`)}`,
      '-out',
      'leaf.csr',
    ]);
    run([
      'x509',
      '-req',
      '-in',
      'leaf.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      'ext.cnf',
      '-extensions',
      'leaf',
      '-out',
      'leaf.pem',
    ]);
    return { cert: readFileSync(file('leaf.pem'), 'utf8'), key: readFileSync(file('leaf.key'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
