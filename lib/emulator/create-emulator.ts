import { randomBytes } from 'node:crypto';
import http from 'node:http';
import express from 'express';
import { OptionsError } from '../options-error';
import { consoleApi, type ConsoleAccount } from './console-api';
import { Emulator } from './emulator';

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
  /** The console API account. Defaults to `acct_emulator` with a random secret. */
  account?: ConsoleAccount;
  /** Layout A's `source` is `/service/<origin>`. Defaults to `'access-grid'`. */
  origin?: string;
  /** Source of retry jitter, in [0, 1). Defaults to `Math.random`. */
  random?: () => number;
  /** Delivery attempts in flight at once; the others wait their turn. Defaults to `8`. */
  maxConcurrentDeliveries?: number;
}

/** The options with their defaults filled in. */
export type ResolvedEmulatorOptions = Required<Omit<EmulatorOptions, 'account' | 'port'>>;

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) {
    throw new OptionsError(
      'ERR_SW_OPTION',
      'createEmulator',
      `${name} must be a non-negative number (got ${String(value)})`,
    );
  }
  return value;
}

function atLeastOne(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new OptionsError(
      'ERR_SW_OPTION',
      'createEmulator',
      `${name} must be a whole number of at least 1 (got ${String(value)})`,
    );
  }
  return value;
}

/** Starts an emulator on 127.0.0.1; `close()` it when done. */
export async function createEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const resolved = {
    retryWindowMs: positive('retryWindowMs', options.retryWindowMs ?? 6 * 60 * 60 * 1000),
    initialBackoffMs: positive('initialBackoffMs', options.initialBackoffMs ?? 1000),
    maxBackoffMs: positive('maxBackoffMs', options.maxBackoffMs ?? 15 * 60 * 1000),
    attemptTimeoutMs: positive('attemptTimeoutMs', options.attemptTimeoutMs ?? 10_000),
    origin: options.origin ?? 'access-grid',
    random: options.random ?? Math.random,
    maxConcurrentDeliveries: atLeastOne('maxConcurrentDeliveries', options.maxConcurrentDeliveries ?? 8),
  };
  const account = options.account ?? {
    accountId: 'acct_emulator',
    secretKey: randomBytes(32).toString('hex'),
  };
  const app = express();
  const server = http.createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const emulator = new Emulator(server, account, resolved);
  app.use(consoleApi(emulator.backend));
  return emulator;
}
