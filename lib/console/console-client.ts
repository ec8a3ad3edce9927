import { isEventType } from '../events/catalogue';
import { BodyTooLargeError, readBoundedText } from '../read-bounded-text';
import { OptionsError } from '../options-error';
import { ConsoleApiError, ConsoleNetworkError, ConsoleValidationError } from './console-errors';
import {
  createInputToWire,
  pageFromWire,
  webhookFromWire,
  type ConsoleWebhook,
  type CreateWebhookInput,
  type WebhookPage,
} from './console-wire';
import { signPayload } from './sign-payload';

export interface ConsoleClientOptions {
  /** The Service's base URL, without `/v1/console/webhooks`. Required. */
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

export interface ListOptions {
  /** Defaults to `1`. */
  page?: number;
  /** Defaults to `50`; at most `100`. */
  perPage?: number;
}

export interface WaitUntilVerifiedOptions {
  /** Defaults to `30_000` ms. */
  timeoutMs?: number;
  /** Time between polls of the list. Defaults to `1_000` ms. */
  intervalMs?: number;
}

export interface VerifyResult {
  id: string;
  verified: boolean;
  /** 200: already verified; 202: the challenge was (re)sent. */
  status: 200 | 202;
}

const PATH = '/v1/console/webhooks';
/** A list page of 100 webhooks is a few tens of kilobytes; anything far past that is not an answer. */
const RESPONSE_LIMIT = 4 * 1024 * 1024;
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function required(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new OptionsError('ERR_SW_OPTION', 'ConsoleClient', `${name} must be a non-empty string`);
  }
  return value;
}

function wholeNumber(method: string, field: string, value: number, max = Number.MAX_SAFE_INTEGER): void {
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new ConsoleValidationError(
      method,
      field,
      `must be a whole number from 1 to ${max} (got ${String(value)})`,
    );
  }
}

/** A typed client for the console API (spec section 4), signing every request as spec 5.1 says. */
export class ConsoleClient {
  readonly #baseUrl: string;
  readonly #accountId: string;
  readonly #secretKey: string;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;

  constructor(options: ConsoleClientOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new OptionsError(
        'ERR_SW_OPTION',
        'ConsoleClient',
        'options are required: { baseUrl, accountId, secretKey }',
      );
    }
    const baseUrl = required(options.baseUrl, 'baseUrl');
    if (!URL.canParse(baseUrl)) {
      throw new OptionsError(
        'ERR_SW_OPTION',
        'ConsoleClient',
        `baseUrl must be an absolute URL (got ${JSON.stringify(baseUrl)})`,
      );
    }
    this.#baseUrl = baseUrl.replace(/\/+$/, '');
    this.#accountId = required(options.accountId, 'accountId');
    this.#secretKey = required(options.secretKey, 'secretKey');
    this.#fetch = options.fetch ?? globalThis.fetch;
    if (typeof this.#fetch !== 'function')
      throw new OptionsError('ERR_SW_OPTION', 'ConsoleClient', 'fetch must be a function');
    const timeoutMs = options.timeoutMs ?? 10_000;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new OptionsError(
        'ERR_SW_TIMEOUT',
        'ConsoleClient',
        `timeoutMs must be a positive number (got ${String(timeoutMs)})`,
      );
    }
    this.#timeoutMs = timeoutMs;
  }

  /** One page of the account's webhooks. */
  async listWebhooks(options: ListOptions = {}): Promise<WebhookPage> {
    const { page = 1, perPage = 50 } = options;
    wholeNumber('listWebhooks', 'page', page);
    wholeNumber('listWebhooks', 'perPage', perPage, 100);
    const body = await this.#request('GET', PATH, { page: String(page), per_page: String(perPage) });
    const parsed = pageFromWire(body, page, perPage);
    if (parsed === null) {
      throw new ConsoleApiError(
        'GET',
        PATH,
        200,
        body,
        'the list holds no webhooks array (expected an array, or one under "webhooks" or "data")',
      );
    }
    return parsed;
  }

  /** Every webhook of the account, page after page. */
  async *iterateWebhooks(options: Pick<ListOptions, 'perPage'> = {}): AsyncGenerator<ConsoleWebhook> {
    for (let page = 1; ; page++) {
      const result = await this.listWebhooks({ page, perPage: options.perPage ?? 100 });
      yield* result.webhooks;
      if (!result.hasMore || result.webhooks.length === 0) return;
    }
  }

  /** Creates a webhook; the answer carries its `id` and `privateKey` (its delivery token). */
  async createWebhook(input: CreateWebhookInput): Promise<ConsoleWebhook> {
    const method = 'createWebhook';
    if (typeof input?.name !== 'string' || input.name.trim() === '')
      throw new ConsoleValidationError(method, 'name', 'must be a non-empty string');
    const url = typeof input.url === 'string' && URL.canParse(input.url) ? new URL(input.url) : undefined;
    if (url === undefined) throw new ConsoleValidationError(method, 'url', 'must be an absolute URL');
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOCAL_HOSTS.has(url.hostname))) {
      throw new ConsoleValidationError(method, 'url', 'must be https (plain http only for localhost)');
    }
    if (
      input.authMethod !== undefined &&
      input.authMethod !== 'bearer_token' &&
      input.authMethod !== 'mtls'
    ) {
      throw new ConsoleValidationError(method, 'authMethod', "must be 'bearer_token' or 'mtls'");
    }
    if (!Array.isArray(input.subscribedEvents) || input.subscribedEvents.length === 0) {
      throw new ConsoleValidationError(method, 'subscribedEvents', 'must name at least one event type');
    }
    const unknown = input.subscribedEvents.filter((type) => !isEventType(type));
    if (unknown.length > 0) {
      throw new ConsoleValidationError(
        method,
        'subscribedEvents',
        `has types outside the catalogue: ${unknown.join(', ')}`,
      );
    }
    const body = await this.#request('POST', PATH, createInputToWire(input));
    return webhookFromWire(body as Record<string, unknown>);
  }

  async deleteWebhook(id: string): Promise<void> {
    await this.#request('DELETE', `${PATH}/${this.#id('deleteWebhook', id)}`);
  }

  /** Spec 4.4: 200 when already verified, 202 when the challenge was sent again. */
  async verifyWebhook(id: string): Promise<VerifyResult> {
    const path = `${PATH}/${this.#id('verifyWebhook', id)}/verify`;
    const { body, status } = await this.#send('POST', path, {});
    const verified = (body as { verified?: unknown } | null)?.verified === true;
    if (status !== 200 && status !== 202) throw new ConsoleApiError('POST', path, status, body);
    return { id, verified, status };
  }

  /** Polls the list (spec 4.4) until the webhook is verified; rejects past `timeoutMs` or if it is gone. */
  async waitUntilVerified(id: string, options: WaitUntilVerifiedOptions = {}): Promise<ConsoleWebhook> {
    const { timeoutMs = 30_000, intervalMs = 1_000 } = options;
    this.#id('waitUntilVerified', id);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      let found: ConsoleWebhook | undefined;
      for await (const webhook of this.iterateWebhooks()) {
        if (webhook.id === id) {
          found = webhook;
          break;
        }
      }
      if (found === undefined)
        throw new Error(`[service-webhooks] waitUntilVerified: webhook ${id} is not on this account`);
      if (found.verified) return found;
      if (Date.now() + intervalMs > deadline) {
        throw new Error(
          `[service-webhooks] waitUntilVerified: webhook ${id} not verified after ${timeoutMs} ms; check that its URL answers the handshake`,
        );
      }
      await sleep(intervalMs);
    }
  }

  #id(method: string, id: string): string {
    if (typeof id !== 'string' || id === '')
      throw new ConsoleValidationError(method, 'id', 'must be a non-empty string');
    return encodeURIComponent(id);
  }

  async #request(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    payload?: Record<string, unknown>,
  ): Promise<unknown> {
    const { status, body } = await this.#send(method, path, payload);
    if (status < 200 || status > 299) throw new ConsoleApiError(method, path, status, body);
    return body;
  }

  /**
   * Signs and sends. GET and DELETE carry the signed text as `sig_payload` (`{}` here; the query
   * parameters are not part of it); POST signs the exact JSON body it sends.
   */
  async #send(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    payload?: Record<string, unknown>,
  ): Promise<{ status: number; body: unknown }> {
    const url = new URL(`${this.#baseUrl}${path}`);
    const headers: Record<string, string> = { 'X-ACCT-ID': this.#accountId, Accept: 'application/json' };
    let body: string | undefined;
    if (method === 'POST') {
      body = JSON.stringify(payload ?? {});
      headers['Content-Type'] = 'application/json';
      headers['X-PAYLOAD-SIG'] = signPayload(body, this.#secretKey);
    } else {
      const signed = '{}';
      for (const [key, value] of Object.entries(payload ?? {})) url.searchParams.set(key, String(value));
      url.searchParams.set('sig_payload', signed);
      headers['X-PAYLOAD-SIG'] = signPayload(signed, this.#secretKey);
    }
    let res: Response;
    try {
      res = await this.#fetch(url, { method, headers, body, signal: AbortSignal.timeout(this.#timeoutMs) });
    } catch (error) {
      const name = (error as Error | undefined)?.name;
      const code = (error as { cause?: { code?: string } } | undefined)?.cause?.code;
      const reason =
        name === 'TimeoutError' ? `no answer within ${this.#timeoutMs} ms` : (code ?? 'network error');
      throw new ConsoleNetworkError(method, path, reason, error);
    }
    let text: string;
    try {
      text = await readBoundedText(res, RESPONSE_LIMIT);
    } catch (error) {
      const reason =
        error instanceof BodyTooLargeError
          ? `the answer is over ${RESPONSE_LIMIT} bytes`
          : 'the answer was cut off';
      throw new ConsoleNetworkError(method, path, reason, error);
    }
    let parsed: unknown = text;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    return { status: res.status, body: text === '' ? null : parsed };
  }
}
