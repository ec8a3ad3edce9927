import { OptionsError } from '../options-error';
import { checkCreateInput } from './check-create-input';
import { ConsoleApiError, ConsoleValidationError } from './console-errors';
import {
  createInputToWire,
  pageFromWire,
  webhookFromWire,
  type ConsoleWebhook,
  type CreateWebhookInput,
  type WebhookPage,
} from './console-wire';
import { sendSigned, type SignedTarget } from './send-signed';

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
  /** Private, so the secret inside is never enumerated, serialized or printed with the client. */
  readonly #target: SignedTarget;

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
    this.#target = { baseUrl: baseUrl.replace(/\/+$/, ''), accountId, secretKey, fetch: fetchFn, timeoutMs };
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
    checkCreateInput(input);
    const body = await this.#request('POST', PATH, createInputToWire(input));
    return webhookFromWire(body as Record<string, unknown>);
  }

  async deleteWebhook(id: string): Promise<void> {
    await this.#request('DELETE', `${PATH}/${this.#id('deleteWebhook', id)}`);
  }

  /** Spec 4.4: 200 when already verified, 202 when the challenge was sent again. */
  async verifyWebhook(id: string): Promise<VerifyResult> {
    const path = `${PATH}/${this.#id('verifyWebhook', id)}/verify`;
    const { body, status } = await sendSigned(this.#target, 'POST', path, {});
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
    const { status, body } = await sendSigned(this.#target, method, path, payload);
    if (status < 200 || status > 299) throw new ConsoleApiError(method, path, status, body);
    return body;
  }
}
