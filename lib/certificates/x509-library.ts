import { randomBytes, webcrypto } from 'node:crypto';

type X509Library = typeof import('@peculiar/x509');
let library: X509Library | undefined;

/** Loaded on first use: @peculiar/x509 is an optional peer, and the rest of the test kit works without it. */
export function x509(): X509Library {
  if (library === undefined) {
    try {
      // @peculiar/x509 2.x resolves its parts through tsyringe, which needs this polyfill loaded first.
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load of an optional peer
      require('reflect-metadata');
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load of an optional peer
      library = require('@peculiar/x509') as X509Library;
      library.cryptoProvider.set(webcrypto as unknown as Parameters<X509Library['cryptoProvider']['set']>[0]);
    } catch {
      throw new Error(
        '[service-webhooks] createTestCertificates needs @peculiar/x509 and reflect-metadata: npm install --save-dev @peculiar/x509 reflect-metadata',
      );
    }
  }
  return library;
}

/** ECDSA P-256 with SHA-256: small keys, fast to make, taken by Node, nginx and every proxy. */
export const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
export const MINUTE = 60_000;
export const DAY = 24 * 60 * MINUTE;

/** A random 128-bit serial number, as hex. */
export function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] as number) & 0x7f; // positive, as RFC 5280 asks
  return bytes.toString('hex');
}

/** The pair's private key as PKCS #8 PEM. */
export async function privateKeyPem(keys: webcrypto.CryptoKeyPair): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const lines = der.toString('base64').match(/.{1,64}/g) as string[];
  return `-----BEGIN PRIVATE KEY-----\n${lines.join('\n')}\n-----END PRIVATE KEY-----\n`;
}
