import type { ConsoleAccount } from './console-backend';
import type { Logger } from '../logger';
import type { EmulatorMtlsOptions, EmulatorTls } from './emulator-tls';

/** Options of `createEmulator`; an unknown one throws, with a "did you mean". */
export interface EmulatorOptions {
  /** Port to listen on, on 127.0.0.1. Defaults to `0` (a free port). */
  port?: number;
  /** How long a failing delivery is retried before it is dropped. Defaults to 6 hours, as the Service. */
  retryWindowMs?: number;
  /** The wait before the first retry; it doubles with each attempt (with jitter). Defaults to `1_000` ms. */
  initialBackoffMs?: number;
  /** The longest wait between attempts. Defaults to 15 minutes. */
  maxBackoffMs?: number;
  /** How long one delivery or handshake may take. Defaults to `10_000` ms. */
  attemptTimeoutMs?: number;
  /** Delivery attempts in flight at once; the others wait their turn. Defaults to `8`. */
  maxConcurrentDeliveries?: number;
  /** The console API account. Defaults to `acct_emulator` with a random secret. */
  account?: ConsoleAccount;
  /** Layout A's `source` is `/service/<origin>`. Defaults to `'access-grid'`. */
  origin?: string;
  /** Source of retry jitter, in [0, 1). Defaults to `Math.random`. */
  random?: () => number;
  /**
   * Where the emulator says what went wrong (an event no verified webhook receives, and why).
   * Defaults to warnings on the console; `false` for silence.
   */
  logger?: Logger | false;
  /**
   * TLS for `https://` webhooks: the CA trusted for receivers' server certificates, and the client
   * certificate presented to webhooks whose `authMethod` is `'mtls'` (generated at start when not
   * given; `emulator.clientCertificate` is its PEM). Defaults to the system's CAs and a generated
   * certificate.
   */
  mtls?: EmulatorMtlsOptions;
}

/** The options with their defaults filled in. */
export type ResolvedEmulatorOptions = Required<
  Omit<EmulatorOptions, 'account' | 'port' | 'logger' | 'mtls'>
> & {
  tls: EmulatorTls;
};
