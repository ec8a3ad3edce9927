/** The headers of a real delivery (spec 5.2), less the token. */
export const DELIVERY_HEADERS: {
  /** A structured-mode CloudEvent, UTF-8. */
  readonly 'Content-Type': 'application/cloudevents+json; charset=utf-8';
  /** The Service's user agent. */
  readonly 'User-Agent': 'Service-Webhooks/1.0';
} = {
  'Content-Type': 'application/cloudevents+json; charset=utf-8',
  'User-Agent': 'Service-Webhooks/1.0',
};
