import { createEventRouter, type AnyWebhookEvent, type ReceiverOptions } from '../../lib';
import { DELIVERY_HEADERS } from '../../lib/testing';
import type { Door, OpenDoor, RawRequest } from './doors';

/** A delivery with the Service's headers and `token` as the bearer; `extra` headers win. */
export function tokenDelivery(token: string, event: unknown, extra: Record<string, string> = {}): RawRequest {
  return {
    headers: { ...DELIVERY_HEADERS, authorization: `Bearer ${token}`, ...extra },
    body: JSON.stringify(event),
  };
}

/** A delivery whose body is `body` as given (bytes that may not be JSON, or not UTF-8). */
export function bodyDelivery(
  token: string,
  body: string | Uint8Array,
  extra: Record<string, string> = {},
): RawRequest {
  return { ...tokenDelivery(token, null, extra), body };
}

/**
 * Opens `door` with a router that keeps every event it ran, closing every one opened after each
 * test (a test may open several: a server left listening keeps jest from exiting); for tests of one
 * behaviour through every door.
 */
export function doorReceiver(door: Door, token: string) {
  const opened: OpenDoor[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((d) => d.close()));
  });
  return async function start(options: Partial<ReceiverOptions> = {}) {
    const seen: AnyWebhookEvent[] = [];
    const router = createEventRouter().onAny((event) => void seen.push(event));
    const d = await door.open({ bearerTokens: [token], router, logger: false, ...options });
    opened.push(d);
    return { d, seen };
  };
}
