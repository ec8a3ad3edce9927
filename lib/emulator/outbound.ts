import { readBoundedText } from '../read-bounded-text';
import type { DeliveryEnvelope } from '../events/build-event';
import { DELIVERY_HEADERS } from '../events/delivery-headers';
import type { EmulatorTls } from './emulator-tls';
import type { EmulatedWebhook, HandshakeRecord, OutboundResult } from './emulator-types';
import { postOverTls } from './tls-delivery';

const ANSWER_LIMIT = 64 * 1024;
/** How much of an answer an attempt record keeps, for people to read. */
const KEPT_ANSWER = 8 * 1024;

function authHeaders(webhook: EmulatedWebhook): Record<string, string> {
  return webhook.authMethod === 'bearer_token' ? { Authorization: `Bearer ${webhook.privateKey}` } : {};
}

/** The headers as shown in records and the web console: the token is never kept. */
function maskHeaders(headers: Record<string, string>): Record<string, string> {
  const shown = { ...headers };
  if (shown.Authorization !== undefined) shown.Authorization = 'Bearer ••••••••';
  return shown;
}

async function post(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  tls?: EmulatorTls,
  clientCertificate = false,
): Promise<OutboundResult> {
  // https:// goes through node:https, which can present a client certificate and trust mtls.ca.
  if (tls !== undefined && url.startsWith('https:')) {
    return postOverTls(url, headers, body, timeoutMs, tls, clientCertificate);
  }
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    // A receiver's answer is read to check a handshake echo and to show it; one too large shows nothing.
    const text = await readBoundedText(res, ANSWER_LIMIT).catch(() => '');
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
    const answerHeaders = Object.fromEntries(res.headers.entries());
    return {
      status: res.status,
      error: null,
      body: parsed,
      text: text.slice(0, KEPT_ANSWER),
      headers: answerHeaders,
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    const name = (error as Error).name;
    const reason =
      name === 'TimeoutError' ? `timed out after ${timeoutMs} ms` : (cause ?? (error as Error).message);
    return { status: null, error: reason, body: null, text: null, headers: {} };
  }
}

/** POSTs one delivery with the headers of spec 5.2. */
export async function postDelivery(
  webhook: EmulatedWebhook,
  envelope: DeliveryEnvelope,
  timeoutMs: number,
  tls?: EmulatorTls,
): Promise<OutboundResult & { requestHeaders: Record<string, string> }> {
  const headers = { ...DELIVERY_HEADERS, ...authHeaders(webhook) };
  const mtls = webhook.authMethod === 'mtls';
  const result = await post(webhook.url, headers, JSON.stringify(envelope), timeoutMs, tls, mtls);
  return { ...result, requestHeaders: maskHeaders(headers) };
}

function problemDetail(body: unknown): string | undefined {
  const detail = (body as { detail?: unknown } | null)?.detail;
  return typeof detail === 'string' ? detail.slice(0, 300) : undefined;
}

/** POSTs the handshake of spec 5.3; verified only if the answer is 200 and echoes the challenge. */
export async function postHandshake(
  webhook: EmulatedWebhook,
  challenge: string,
  timeoutMs: number,
  tls?: EmulatorTls,
): Promise<HandshakeRecord> {
  const at = new Date().toISOString();
  const headers = {
    'Content-Type': 'application/json',
    'User-Agent': DELIVERY_HEADERS['User-Agent'],
    'X-Service-Webhook-Challenge': challenge,
    ...authHeaders(webhook),
  };
  const mtls = webhook.authMethod === 'mtls';
  const result = await post(webhook.url, headers, JSON.stringify({ challenge }), timeoutMs, tls, mtls);
  const echoed = (result.body as { challenge?: unknown } | null)?.challenge;
  const verified = result.status === 200 && echoed === challenge;
  const reason = verified
    ? null
    : (result.error ??
      problemDetail(result.body) ??
      (result.status === 200 ? 'the answer did not echo the challenge' : `answered ${result.status}`));
  return { at, verified, status: result.status, reason };
}
