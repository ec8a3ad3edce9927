import type { WebhookRequest } from '../../lib/core/webhook-request';
import { DELIVERY_HEADERS } from '../../lib/testing';

/**
 * A request as a door gives the core: `body` with the delivery's headers and `token`. Its body is
 * read at once unless `read` says how; `readNow`, when given, offers it without a promise.
 */
export function coreRequest(
  body: string,
  token: string,
  read: (bytes: Buffer) => Promise<Uint8Array> = (bytes) => Promise.resolve(bytes),
  readNow?: (bytes: Buffer) => Uint8Array | undefined,
): WebhookRequest {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  for (const [name, value] of Object.entries(DELIVERY_HEADERS)) headers[name.toLowerCase()] = value;
  const bytes = Buffer.from(body);
  return {
    method: 'POST',
    header: (name) => headers[name],
    hasHeaderPrefix: () => false,
    body: { hasBody: true, read: () => read(bytes), readNow: readNow && (() => readNow(bytes)) },
  };
}
