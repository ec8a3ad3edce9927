import { createPrivateKey, X509Certificate } from 'node:crypto';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { checkOptionKeys } from '../check-option-keys';
import { OptionsError } from '../options-error';
import { createTestCertificates } from '../certificates/create-test-certificates';

/** The emulator's `mtls` option: how it delivers to webhooks whose `authMethod` is `'mtls'`, over TLS. */
export interface EmulatorMtlsOptions {
  /**
   * PEM CA certificate(s) the emulator trusts for receivers' server certificates on `https://`
   * webhooks, as well as the system's. Defaults to the system's CAs only.
   */
  ca?: string | readonly string[];
  /**
   * The client certificate (PEM) presented to webhooks whose `authMethod` is `'mtls'`, with `key`.
   * Defaults to one generated at start (needs the optional peers `@peculiar/x509` and `reflect-metadata`).
   */
  cert?: string;
  /** The private key (PEM) of `cert`; required with it. */
  key?: string;
  /**
   * `ag.webhook.cert_expiring` is emitted once the client certificate expires within this many days.
   * Defaults to `7`, so the 30-day certificate generated at start does not warn on every run.
   */
  expiringWithinDays?: number;
}

/** The client certificate the emulator presents, with what is said about it. */
export interface ClientCertificate {
  cert: string;
  key: string;
  /** `AB:CD:…` SHA-256 of the certificate. */
  fingerprint: string;
  subject: string;
  notAfter: Date;
}

/** What the emulator's outbound TLS uses, read once at start. */
export interface EmulatorTls {
  /** The system's CAs and `mtls.ca`; one context without, one with the client certificate. */
  contexts: { plain: SecureContext; withClient: SecureContext | null };
  /** Null when none was given and none could be made (`missing` says why). */
  client: ClientCertificate | null;
  missing?: string;
  expiringWithinMs: number;
}

const DAY = 24 * 60 * 60 * 1000;
const KNOWN_KEYS = ['ca', 'cert', 'key', 'expiringWithinDays'];

const fail = (message: string): never => {
  throw new OptionsError('ERR_SW_MTLS', 'createEmulator', `mtls.${message}`);
};

function checkCa(ca: unknown): string[] | undefined {
  if (ca === undefined) return undefined;
  const list =
    typeof ca === 'string'
      ? [ca]
      : Array.isArray(ca)
        ? (ca as unknown[])
        : fail('ca must be PEM text or an array of it');
  return list.map((pem, index) => {
    try {
      if (typeof pem !== 'string' || /PRIVATE KEY-----/.test(pem)) throw new Error('not certificate PEM');
      new X509Certificate(pem);
      return pem;
    } catch {
      return fail(
        `ca${typeof ca === 'string' ? '' : `[${index}]`} must be PEM certificate text (and never a private key)`,
      );
    }
  });
}

function clientPair(cert: unknown, key: unknown): { cert: string; key: string; x509: X509Certificate } {
  if (typeof cert !== 'string' || typeof key !== 'string')
    return fail('cert and key must be given together, as PEM text');
  let x509: X509Certificate | undefined;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    return fail('cert is not a PEM certificate');
  }
  let matches = false;
  try {
    matches = x509.checkPrivateKey(createPrivateKey(key));
  } catch {
    return fail('key is not a PEM private key');
  }
  if (!matches) fail('key is not the private key of cert');
  return { cert, key, x509 };
}

function describe(pair: { cert: string; key: string; x509: X509Certificate }): ClientCertificate {
  return {
    cert: pair.cert,
    key: pair.key,
    fingerprint: pair.x509.fingerprint256,
    subject: pair.x509.subject.split('\n').join(', '),
    notAfter: new Date(pair.x509.validTo),
  };
}

/** Checks `createEmulator`'s `mtls` option and makes a client certificate when none is given. */
export async function resolveEmulatorTls(options: EmulatorMtlsOptions | undefined): Promise<EmulatorTls> {
  if (options !== undefined && (typeof options !== 'object' || options === null)) fail('must be an object');
  const given = options ?? {};
  checkOptionKeys(given, KNOWN_KEYS, 'createEmulator mtls');
  const days = given.expiringWithinDays ?? 7;
  if (typeof days !== 'number' || !Number.isFinite(days) || days < 0) {
    fail(`expiringWithinDays must be a non-negative number (got ${String(days)})`);
  }
  const ca = checkCa(given.ca);
  const expiringWithinMs = days * DAY;
  const trusted = [...rootCertificates, ...(ca ?? [])];
  const plain = createSecureContext({ ca: trusted });
  let client: ClientCertificate;
  if (given.cert === undefined && given.key === undefined) {
    const generated = await createTestCertificates().catch((error: Error) => error);
    // Without the optional peers the emulator still runs; only mtls webhooks then fail, saying why.
    if (generated instanceof Error) {
      return {
        contexts: { plain, withClient: null },
        client: null,
        missing: generated.message,
        expiringWithinMs,
      };
    }
    client = describe(clientPair(generated.client.cert, generated.client.key));
  } else client = describe(clientPair(given.cert, given.key));
  const withClient = createSecureContext({ ca: trusted, cert: client.cert, key: client.key });
  return { contexts: { plain, withClient }, client, expiringWithinMs };
}
