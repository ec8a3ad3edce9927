import { readBoundedText } from '../read-bounded-text';
import type { DeliveryEnvelope } from '../testing/build-event';
import { DELIVERY_HEADERS } from '../testing/delivery-headers';
import type { EmulatedWebhook } from './emulator-types';

const ANSWER_LIMIT = 64 * 1024;

export interface OutboundResult {
  status: number | null;
  error: string | null;
  body: unknown;
}

function authHeaders(webhook: EmulatedWebhook): Record<string, string> {
  return webhook.authMethod === 'bearer_token' ? { Authorization: `Bearer ${webhook.privateKey}` } : {};
}

async function post(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<OutboundResult> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    // A receiver's answer is read only to check a handshake echo; one too large echoes nothing.
    const text = await readBoundedText(res, ANSWER_LIMIT).catch(() => '');
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: res.status, error: null, body: parsed };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    const name = (error as Error).name;
    const reason =
      name === 'TimeoutError' ? `timed out after ${timeoutMs} ms` : (cause ?? (error as Error).message);
    return { status: null, error: reason, body: null };
  }
}

/** POSTs one delivery with the headers of spec 5.2. */
export function postDelivery(
  webhook: EmulatedWebhook,
  envelope: DeliveryEnvelope,
  timeoutMs: number,
): Promise<OutboundResult> {
  return post(
    webhook.url,
    { ...DELIVERY_HEADERS, ...authHeaders(webhook) },
    JSON.stringify(envelope),
    timeoutMs,
  );
}

/** POSTs the handshake of spec 5.3; true only if the answer echoes the challenge. */
export async function postHandshake(
  webhook: EmulatedWebhook,
  challenge: string,
  timeoutMs: number,
): Promise<boolean> {
  const headers = {
    'Content-Type': 'application/json',
    'User-Agent': DELIVERY_HEADERS['User-Agent'],
    'X-Service-Webhook-Challenge': challenge,
    ...authHeaders(webhook),
  };
  const result = await post(webhook.url, headers, JSON.stringify({ challenge }), timeoutMs);
  const echoed = (result.body as { challenge?: unknown } | null)?.challenge;
  return result.status === 200 && echoed === challenge;
}
