import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { checkOptionKeys } from '../check-option-keys';
import { resolveLogger } from '../logger';
import { OptionsError } from '../options-error';
import { ApiProblem, sendApiProblem } from './api-problem';
import { consoleApi } from './console-api';
import type { ConsoleAccount } from './console-backend';
import { controlApi, localOnly } from './control-api';
import type { EmulatorRouter } from './emulator-router';
import { watchCertificateExpiry } from './cert-expiry';
import { Emulator } from './emulator';
import type { EmulatorOptions, ResolvedEmulatorOptions } from './emulator-options';
import { resolveEmulatorTls } from './emulator-tls';
import { webConsole } from './web-console/web-console';

const KNOWN_KEYS: readonly (keyof EmulatorOptions)[] = [
  'port',
  'retryWindowMs',
  'initialBackoffMs',
  'maxBackoffMs',
  'attemptTimeoutMs',
  'maxConcurrentDeliveries',
  'account',
  'origin',
  'random',
  'logger',
  'mtls',
];

const fail = (message: string): never => {
  throw new OptionsError('ERR_SW_OPTION', 'createEmulator', message);
};

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0)
    fail(`${name} must be a non-negative number (got ${String(value)})`);
  return value;
}

function atLeastOne(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    fail(`${name} must be a whole number of at least 1 (got ${String(value)})`);
  return value;
}

function checkAccount(account: ConsoleAccount | undefined): ConsoleAccount {
  if (account === undefined)
    return { accountId: 'acct_emulator', secretKey: randomBytes(32).toString('hex') };
  if (
    typeof account?.accountId !== 'string' ||
    account.accountId === '' ||
    typeof account.secretKey !== 'string' ||
    account.secretKey === ''
  )
    fail('account must be { accountId, secretKey }, both non-empty strings');
  checkOptionKeys(account, ['accountId', 'secretKey'], 'createEmulator account');
  return { accountId: account.accountId, secretKey: account.secretKey };
}

/** Starts an emulator on 127.0.0.1, its web console at the root; `close()` it when done. */
export async function createEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  if (typeof options !== 'object' || options === null) fail('options must be an object');
  checkOptionKeys(options, KNOWN_KEYS, 'createEmulator');
  const port = options.port ?? 0;
  if (!Number.isSafeInteger(port) || port < 0 || port > 65535)
    fail(`port must be 0 to 65535 (got ${String(port)})`);
  if (options.random !== undefined && typeof options.random !== 'function') fail('random must be a function');
  const resolved: ResolvedEmulatorOptions = {
    retryWindowMs: positive('retryWindowMs', options.retryWindowMs ?? 6 * 60 * 60 * 1000),
    initialBackoffMs: positive('initialBackoffMs', options.initialBackoffMs ?? 1000),
    maxBackoffMs: positive('maxBackoffMs', options.maxBackoffMs ?? 15 * 60 * 1000),
    attemptTimeoutMs: positive('attemptTimeoutMs', options.attemptTimeoutMs ?? 10_000),
    maxConcurrentDeliveries: atLeastOne('maxConcurrentDeliveries', options.maxConcurrentDeliveries ?? 8),
    origin: options.origin ?? 'access-grid',
    random: options.random ?? Math.random,
    tls: await resolveEmulatorTls(options.mtls),
  };
  const account = checkAccount(options.account);
  const logger = resolveLogger(options.logger, 'createEmulator');
  let routers: EmulatorRouter[] = [];
  let local: ReturnType<typeof localOnly> = () => undefined;
  const server = http.createServer((req, res) => void serve(req, res));
  async function serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://emulator.invalid');
      const found = routers.map((router) => router.match(req, url)).find((match) => match !== undefined);
      if (found === undefined) throw NOT_FOUND;
      if (url.pathname.startsWith('/_emulator/')) local(found.req);
      await found.handler(found.req, res);
    } catch (error) {
      sendApiProblem(res, error instanceof ApiProblem ? error : INTERNAL);
      if (!(error instanceof ApiProblem)) logger.error({ err: error }, 'emulator: a request failed');
    }
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const emulator = new Emulator(server, account, resolved, logger);
  watchCertificateExpiry(emulator, resolved.tls);
  local = localOnly(Number(new URL(emulator.url).port));
  routers = [webConsole(emulator), controlApi(emulator), consoleApi(emulator.backend)];
  return emulator;
}

const NOT_FOUND = new ApiProblem({
  status: 404,
  slug: 'not-found',
  title: 'Not Found',
  detail: 'The emulator has nothing at this path.',
});
const INTERNAL = new ApiProblem({
  status: 500,
  slug: 'internal-error',
  title: 'Internal Server Error',
  detail: 'The emulator failed.',
});
