import { z } from 'zod';
import { isLoopback } from '../console/is-loopback';
import { EVENT_TYPES } from '../events/catalogue';
import type { EmulatedWebhook } from './emulator-types';

/** The console API's wire shapes (spec 4.1, 4.2), snake_case as the Service's. */
export const createBody = z.object({
  name: z.string({ error: 'is required' }).trim().min(1, { error: 'must not be empty' }),
  url: z.url({ error: 'must be an absolute URL' }).refine(
    (url) => {
      const { protocol, hostname } = new URL(url);
      return protocol === 'https:' || (protocol === 'http:' && isLoopback(hostname));
    },
    { error: 'must be https (http only for localhost)' },
  ),
  auth_method: z.enum(['bearer_token', 'mtls'], { error: "must be 'bearer_token' or 'mtls'" }).nullish(),
  subscribed_events: z
    .array(z.enum(EVENT_TYPES, { error: 'must be an event type of spec section 6' }), {
      error: 'must be an array',
    })
    .min(1, { error: 'must name at least one event type' }),
});

const pageParam = (max: number, fallback: number) =>
  z.coerce
    .number({ error: 'must be a whole number' })
    .int({ error: 'must be a whole number' })
    .min(1)
    .max(max)
    .default(fallback);
export const listQuery = z.object({
  page: pageParam(Number.MAX_SAFE_INTEGER, 1),
  per_page: pageParam(100, 50),
});

export function toWire(webhook: EmulatedWebhook): Record<string, unknown> {
  return {
    id: webhook.id,
    name: webhook.name,
    url: webhook.url,
    auth_method: webhook.authMethod,
    subscribed_events: webhook.subscribedEvents,
    verified: webhook.verified,
  };
}
