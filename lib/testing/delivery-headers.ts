/** The headers of a real delivery (spec 5.2), less the token. */
export const DELIVERY_HEADERS = {
  'Content-Type': 'application/cloudevents+json; charset=utf-8',
  'User-Agent': 'Service-Webhooks/1.0',
} as const;
