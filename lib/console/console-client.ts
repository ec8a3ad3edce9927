import { checkOptionKeys } from '../check-option-keys';
import { checkCreateInput } from './check-create-input';
import { ConsoleApiError, ConsoleValidationError } from './console-errors';
import {
  createInputToWire,
  pageFromWire,
  webhookFromWire,
  type ConsoleWebhook,
  type CreatedWebhook,
  type CreateWebhookInput,
  type WebhookPage,
} from './console-wire';
import { resolveConsoleOptions, type ConsoleClientOptions } from './console-client-options';
import { sendSigned, type SignedTarget } from './send-signed';
import { waitUntilVerified, type WaitUntilVerifiedOptions } from './wait-until-verified';
import { walkPages } from './walk-pages';
import { webhookIdSegment } from './webhook-id-segment';

export type { WaitUntilVerifiedOptions } from './wait-until-verified';
export type { ConsoleClientOptions } from './console-client-options';

/** Which page `listWebhooks` asks for. */
export interface ListOptions {
  /** Defaults to `1`. */
  page?: number;
  /** Defaults to `50`; at most `100`. */
  perPage?: number;
}

/** The answer to `verifyWebhook`. */
export interface VerifyResult {
  /** The webhook's id. */
  id: string;
  /** Whether it is verified now (a 202 resent the challenge: poll with `waitUntilVerified`). */
  verified: boolean;
  /** 200: already verified; 202: the challenge was (re)sent. */
  status: 200 | 202;
}

const PATH = '/v1/console/webhooks';

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
    this.#target = resolveConsoleOptions(options);
  }

  /** One page of the account's webhooks. */
  async listWebhooks(options: ListOptions = {}): Promise<WebhookPage> {
    checkOptionKeys(options, ['page', 'perPage'], 'ConsoleClient.listWebhooks');
    return this.#list(options);
  }

  async #list(options: ListOptions, signal?: AbortSignal): Promise<WebhookPage> {
    const { page = 1, perPage = 50 } = options;
    wholeNumber('listWebhooks', 'page', page);
    wholeNumber('listWebhooks', 'perPage', perPage, 100);
    const query = { page: String(page), per_page: String(perPage) };
    const body = await this.#request('GET', PATH, query, signal);
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

  /** Every webhook of the account, page after page; stops on a page seen before, throws past 1000 pages. */
  async *iterateWebhooks(options: Pick<ListOptions, 'perPage'> = {}): AsyncGenerator<ConsoleWebhook> {
    checkOptionKeys(options, ['perPage'], 'ConsoleClient.iterateWebhooks');
    const perPage = options.perPage ?? 100;
    for await (const page of walkPages((n) => this.#list({ page: n, perPage }))) yield* page.webhooks;
  }

  /** Creates a webhook; the answer carries its `id` and `privateKey` (its delivery token). */
  async createWebhook(input: CreateWebhookInput): Promise<CreatedWebhook> {
    checkCreateInput(input);
    const { status, body } = await sendSigned(this.#target, 'POST', PATH, createInputToWire(input));
    if (status < 200 || status > 299) throw new ConsoleApiError('POST', PATH, status, body);
    const privateKey = (body as { private_key?: unknown } | null)?.private_key;
    if (typeof privateKey !== 'string' || privateKey === '') {
      const why = 'the created webhook carries no private_key (spec 2.5), so its delivery token is unknown';
      throw new ConsoleApiError('POST', PATH, status, body, why);
    }
    return { ...webhookFromWire(body as Record<string, unknown>), privateKey };
  }

  /** Deletes a webhook: the Service stops delivering to it. Rejects with a `ConsoleApiError` when it does not exist. */
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

  /**
   * Polls the list (spec 4.4) until the webhook is verified; rejects past `timeoutMs` (which bounds
   * the list requests too) or if it is gone.
   */
  async waitUntilVerified(id: string, options: WaitUntilVerifiedOptions = {}): Promise<ConsoleWebhook> {
    this.#id('waitUntilVerified', id);
    checkOptionKeys(options, ['timeoutMs', 'intervalMs'], 'ConsoleClient.waitUntilVerified');
    return waitUntilVerified((page, signal) => this.#list({ page, perPage: 100 }, signal), id, options);
  }

  #id(method: string, id: string): string {
    return webhookIdSegment(method, id);
  }

  async #request(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    payload?: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<unknown> {
    const { status, body } = await sendSigned(this.#target, method, path, payload, signal);
    if (status < 200 || status > 299) throw new ConsoleApiError(method, path, status, body);
    return body;
  }
}
