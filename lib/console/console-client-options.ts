import { checkOptionKeys } from '../check-option-keys';
import { OptionsError } from '../options-error';
import { isLoopback } from './is-loopback';
import type { SignedTarget } from './send-signed';

/** Options of {@link ConsoleClient}; an unknown one throws, with a "did you mean". */
export interface ConsoleClientOptions {
  /**
   * The Service's base URL, without `/v1/console/webhooks`. Required. `https:`, or `http:` only to
   * this machine (`localhost`, `127.0.0.1`, `[::1]`): the signed headers must not cross a network in clear.
   */
  baseUrl: string;
  /** Sent as `X-ACCT-ID`. Required. */
  accountId: string;
  /** The account secret that signs every request. Required; never logged or put in an error. */
  secretKey: string;
  /** A `fetch` to use instead of the platform's. Defaults to `globalThis.fetch`. */
  fetch?: typeof fetch;
  /** How long one request may take. Defaults to `10_000` ms. */
  timeoutMs?: number;
}

const KNOWN_KEYS: readonly (keyof ConsoleClientOptions)[] = [
  'baseUrl',
  'accountId',
  'secretKey',
  'fetch',
  'timeoutMs',
];

function required(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new OptionsError('ERR_SW_OPTION', 'ConsoleClient', `${name} must be a non-empty string`);
  }
  return value;
}

function checkBaseUrl(baseUrl: string): string {
  const url = URL.canParse(baseUrl) ? new URL(baseUrl) : undefined;
  const fail = (rule: string) => {
    throw new OptionsError('ERR_SW_OPTION', 'ConsoleClient', `baseUrl ${rule}`);
  };
  if (url === undefined) fail(`must be an absolute URL (got ${JSON.stringify(baseUrl)})`);
  else if (url.protocol === 'http:' && !isLoopback(url.hostname))
    fail(
      `must use https: plain http is allowed only to localhost, 127.0.0.1 or [::1], as the signed headers would cross the network in clear (got host ${url.hostname})`,
    );
  else if (url.protocol !== 'https:' && url.protocol !== 'http:')
    fail(`must be an https URL (got ${url.protocol})`);
  else if (url.username !== '' || url.password !== '')
    fail('must not carry a user name or password; the account signs its requests');
  return baseUrl;
}

/** Checks the options once, at construction; the client never reads them again. */
export function resolveConsoleOptions(options: ConsoleClientOptions): SignedTarget {
  if (typeof options !== 'object' || options === null) {
    throw new OptionsError(
      'ERR_SW_OPTION',
      'ConsoleClient',
      'options are required: { baseUrl, accountId, secretKey }',
    );
  }
  checkOptionKeys(options, KNOWN_KEYS, 'ConsoleClient');
  const baseUrl = checkBaseUrl(required(options.baseUrl, 'baseUrl'));
  const accountId = required(options.accountId, 'accountId');
  const secretKey = required(options.secretKey, 'secretKey');
  const fetchFn = options.fetch ?? globalThis.fetch;
  if (typeof fetchFn !== 'function') {
    throw new OptionsError('ERR_SW_OPTION', 'ConsoleClient', 'fetch must be a function');
  }
  const timeoutMs = options.timeoutMs ?? 10_000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new OptionsError(
      'ERR_SW_TIMEOUT',
      'ConsoleClient',
      `timeoutMs must be a positive number (got ${String(timeoutMs)})`,
    );
  }
  return { baseUrl: baseUrl.replace(/\/+$/, ''), accountId, secretKey, fetch: fetchFn, timeoutMs };
}
