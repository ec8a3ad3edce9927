// The receiver a customer could copy. In your app, import from 'service-webhooks' instead of '../lib'.
import express, { type Express } from 'express';
import { Registry } from 'prom-client';
import {
  challengeHandshake,
  createEventRouter,
  webhookReceiver,
  type AccessPassEventType,
  type AnyWebhookEvent,
  type DeliveryRecord,
  type EventRouter,
  type Logger,
  type WebhookEvent,
  type WebhookReceiver,
} from '../lib';
import { prometheusMetrics } from '../lib/metrics';

/** One delivery as the receiver saw it; the emulator's web console shows the sender's side. */
export interface DeliveryLogEntry {
  seq: number;
  at: string;
  type: string;
  layout: string;
  eventId: string;
  /** How many deliveries of this event the receiver has seen, this one included. */
  attempt: number;
  status: number;
  outcome: 'processed' | 'duplicate' | 'unhandled' | 'failed' | 'rejected';
}

export interface DemoReceiver {
  app: Express;
  /** Builds the receiver once the webhook's token is known (it exists only after registration). */
  useToken(token: string): void;
  /** Times each event's handlers succeeded, by event id. */
  readonly handled: ReadonlyMap<string, number>;
  readonly log: readonly DeliveryLogEntry[];
  drain(): Promise<void>;
}

function describePass(event: WebhookEvent<AccessPassEventType>): string {
  const { data } = event;
  // Layout B carries the pass id and the credential, not the holder or the state: say only what came.
  return event.layout === 'B'
    ? `pass ${data.id}${data.details?.card_number ? `, card ${data.details.card_number}` : ''}`
    : `pass ${data.id} (${data.full_name}), state ${data.state}`;
}

/** The demo's handlers, and how many times each event's succeeded, by event id. */
export interface DemoRouter {
  router: EventRouter;
  readonly handled: ReadonlyMap<string, number>;
}

/**
 * The demo's handlers: one per family, each logging what its event says. The card template handler
 * fails the first time it sees an event whose metadata holds `fail_once: true`, as a dependency
 * briefly down would, so the Service's retry is seen. Any door can mount it (the demo's Express app,
 * a Fastify plugin, a Nest module's `router`).
 */
export function createDemoRouter(logger: Logger | false = false): DemoRouter {
  const handled = new Map<string, number>();
  const failedOnce = new Set<string>();

  const succeeded = (event: AnyWebhookEvent, line: string) => {
    handled.set(event.id, (handled.get(event.id) ?? 0) + 1);
    if (logger && logger.info)
      (logger.info as (m: object, s: string) => void)(
        { id: event.id, layout: event.layout },
        `${event.type}: ${line}`,
      );
  };

  const router = createEventRouter()
    .on('ag.access_pass.*', (event) => {
      // One handler for the family; checking event.type narrows event.data to that type's promises.
      if (event.type === 'ag.access_pass.issued')
        return succeeded(event, `issued, card ${event.data.details.card_number}`);
      const device = event.data.devices?.[0];
      succeeded(event, `${describePass(event)}${device ? `, device ${device.id} (${device.type})` : ''}`);
    })
    .on('ag.card_template.*', (event) => {
      // The scenario's flaky dependency: fails the first time it sees a marked event.
      if (event.data.metadata.fail_once === true && !failedOnce.has(event.id)) {
        failedOnce.add(event.id);
        throw new Error('template store briefly unavailable');
      }
      succeeded(event, `template ${event.data.card_template_id} (${event.data.protocol})`);
    })
    .on('ag.card_template_pair.*', (event) =>
      succeeded(
        event,
        event.data.card_templates === null
          ? `template pair with ${event.data.card_template_id}` // layout B names one template only
          : `pair of ${event.data.card_templates.length} templates`,
      ),
    )
    .on('ag.landing_page.*', (event) => succeeded(event, `landing page ${event.data.landing_page_id}`))
    .on('ag.credential_profile.*', (event) => succeeded(event, `profile ${event.data.credential_profile_id}`))
    .on('ag.hid_org.*', (event) =>
      succeeded(
        event,
        // Layout B has no hid_org_id (spec 2.4), and an HID org event names nothing else.
        event.data.hid_org_id === null ? 'HID org (layout B names none)' : `HID org ${event.data.hid_org_id}`,
      ),
    )
    .on('ag.account_balance.low', (event) =>
      succeeded(event, `balance ${event.data.current_balance} < threshold ${event.data.threshold}`),
    )
    // A warning for people, not a command: tell whoever owns the mTLS pins to add the next
    // certificate's pin beside the current one before the date; never pin from the event itself.
    .on('ag.webhook.cert_expiring', (event) => {
      const data = event.data as Record<string, unknown>;
      const fingerprint =
        typeof data.certificate_fingerprint === 'string' ? data.certificate_fingerprint : 'unknown';
      const expires = typeof data.expires_at === 'string' ? data.expires_at : 'soon';
      succeeded(
        event,
        `the Service's client certificate ${fingerprint.slice(0, 23)}… expires ${expires}: add the next certificate's fingerprint to mtls.fingerprints before then`,
      );
    });

  return { router, handled };
}

export function createDemoReceiver(logger: Logger | false = false): DemoReceiver {
  const { router, handled } = createDemoRouter(logger);
  const log: DeliveryLogEntry[] = [];
  const seen = new Map<string, number>();
  let receiver: WebhookReceiver | undefined;

  /** Logs what the receiver answered, once the answer is sent. */
  const record = (delivery: DeliveryRecord) => {
    if (delivery.eventId === null || delivery.outcome === 'handshake') return;
    const attempt = (seen.get(delivery.eventId) ?? 0) + 1;
    seen.set(delivery.eventId, attempt);
    const outcome: DeliveryLogEntry['outcome'] =
      delivery.outcome === 'processed' || delivery.outcome === 'unhandled' || delivery.outcome === 'duplicate'
        ? delivery.outcome
        : delivery.outcome === 'rejected'
          ? 'rejected'
          : 'failed';
    log.push({
      seq: log.length + 1,
      at: new Date().toISOString(),
      type: delivery.type ?? '',
      layout: delivery.layout ?? '',
      eventId: delivery.eventId,
      attempt,
      status: delivery.status,
      outcome,
    });
  };

  // Prometheus metrics of every delivery, scraped at GET /metrics (keep that path internal in production).
  const registry = new Registry();
  const metrics = prometheusMetrics({ registry });
  const onDelivery = Object.assign((delivery: DeliveryRecord) => (metrics(delivery), record(delivery)), {
    onRequestStart: metrics.onRequestStart,
  });

  const app = express();
  app.get('/metrics', async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  });
  app.use('/webhooks', challengeHandshake(), (req, res, next) => {
    if (receiver === undefined) {
      res.status(503).set('Retry-After', '1').type('application/problem+json');
      return void res.send(
        JSON.stringify({
          type: 'about:blank',
          title: 'Service Unavailable',
          status: 503,
          detail: 'The receiver has no token yet; retry shortly.',
        }),
      );
    }
    receiver(req, res, next);
  });

  return {
    app,
    handled,
    log,
    useToken(token) {
      receiver = webhookReceiver({
        bearerTokens: [token],
        router,
        logger: logger || false,
        timeoutMs: 5000,
        onDelivery,
      });
    },
    drain: async () => {
      await receiver?.drain();
    },
  };
}
