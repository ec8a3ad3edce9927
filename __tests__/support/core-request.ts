import type { WebhookRequest } from '../../lib/core/webhook-request';
import { DELIVERY_HEADERS } from '../../lib/testing';

/** A request as a door gives the core: `body` with the delivery's headers and `token`, read at once. */
export function coreRequest(body: string, token: string): WebhookRequest {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  for (const [name, value] of Object.entries(DELIVERY_HEADERS)) headers[name.toLowerCase()] = value;
  const bytes = Buffer.from(body);
  return {
    method: 'POST',
    header: (name) => headers[name],
    hasHeaderPrefix: () => false,
    body: { hasBody: true, read: () => Promise.resolve(bytes) },
  };
}
