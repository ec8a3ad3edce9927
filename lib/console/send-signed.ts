import { BodyTooLargeError, readBoundedText } from '../read-bounded-text';
import { ConsoleApiError, ConsoleNetworkError } from './console-errors';
import { signPayload } from './sign-payload';

/** A list page of 100 webhooks is a few tens of kilobytes; anything far past that is not an answer. */
const RESPONSE_LIMIT = 4 * 1024 * 1024;

/** Where and as whom a console request goes. */
export interface SignedTarget {
  baseUrl: string;
  accountId: string;
  secretKey: string;
  fetch: typeof fetch;
  timeoutMs: number;
}

/**
 * Signs and sends. GET and DELETE carry the signed text as `sig_payload` (`{}` here; the query
 * parameters are not part of it); POST signs the exact JSON body it sends. Redirects are never
 * followed: the signature over `{}` is the same for every GET and DELETE, so whoever a redirect points
 * at could replay it to list, verify and delete the account's webhooks. `signal` cuts the request
 * short of `timeoutMs` (a caller's own deadline).
 */
export async function sendSigned(
  target: SignedTarget,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  payload?: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<{ status: number; body: unknown }> {
  const url = new URL(`${target.baseUrl}${path}`);
  const headers: Record<string, string> = { 'X-ACCT-ID': target.accountId, Accept: 'application/json' };
  let body: string | undefined;
  if (method === 'POST') {
    body = JSON.stringify(payload ?? {});
    headers['Content-Type'] = 'application/json';
    headers['X-PAYLOAD-SIG'] = signPayload(body, target.secretKey);
  } else {
    const signed = '{}';
    for (const [key, value] of Object.entries(payload ?? {})) url.searchParams.set(key, String(value));
    url.searchParams.set('sig_payload', signed);
    headers['X-PAYLOAD-SIG'] = signPayload(signed, target.secretKey);
  }
  let res: Response;
  try {
    const timeout = AbortSignal.timeout(target.timeoutMs);
    res = await target.fetch(url, {
      method,
      headers,
      body,
      redirect: 'manual',
      signal: signal === undefined ? timeout : AbortSignal.any([timeout, signal]),
    });
  } catch (error) {
    const name = (error as Error | undefined)?.name;
    const code = (error as { cause?: { code?: string } } | undefined)?.cause?.code;
    const reason =
      name === 'TimeoutError' ? `no answer within ${target.timeoutMs} ms` : (code ?? 'network error');
    throw new ConsoleNetworkError(method, path, reason, error);
  }
  if (res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400)) {
    await res.body?.cancel();
    throw new ConsoleApiError(
      method,
      path,
      res.status,
      null,
      'redirects are not followed, so the signed headers never go to another address; set baseUrl to the address the API answers at',
    );
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
