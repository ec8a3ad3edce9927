import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { didYouMean } from '../did-you-mean';
import type { DeliveryEnvelope } from '../events/build-event';
import { EVENT_TYPES, isEventType } from '../events/catalogue';
import { parseScenario } from '../events/parse-scenario';
import { SCENARIO_VERSION } from '../events/scenario';
import { ApiProblem } from './api-problem';
import type { Emulator } from './emulator';
import { emulatorState, eventView } from './emulator-state';
import { EmulatorRouter, sendEmpty, sendJson, type EmulatorRequest } from './emulator-router';
import { eventsScenario } from './events-scenario';
import { fieldProblem } from './field-problem';
import { sseStream } from './sse-stream';
import { withoutKey } from './webhook-registry';

const triggerBody = z.object({
  type: z.string({ error: 'is required' }),
  layout: z.enum(['A', 'B'], { error: "must be 'A' or 'B'" }).optional(),
  data: z.record(z.string(), z.unknown(), { error: 'must be an object' }).optional(),
  id: z.string().min(1).max(256).optional(),
});

const webhookBody = z.object({
  name: z.string().trim().min(1, { error: 'must not be empty' }),
  url: z.string(),
  subscribedEvents: z.array(z.enum(EVENT_TYPES, { error: 'must be an event type of spec section 6' })).min(1),
  privateKey: z.string().optional(),
});

const notFound = (what: string) =>
  new ApiProblem({ status: 404, slug: 'not-found', title: 'Not Found', detail: `No ${what}.` });

/**
 * Only this machine's pages and tools may drive the emulator: the Host must be loopback (no DNS
 * rebinding), a browser's request must come from the emulator's own pages (a page of another origin
 * could otherwise hold every stream slot through iframes), and a change must be sent as JSON (a
 * cross-site form cannot, and fetch would need CORS).
 */
export function localOnly(port: number): (req: EmulatorRequest) => void {
  const hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
  const origins = new Set([...hosts].map((host) => `http://${host}`));
  const forbidden = (detail: string) =>
    new ApiProblem({ status: 403, slug: 'not-local', title: 'Forbidden', detail });
  return function localOnly(req) {
    if (!hosts.has(req.header('host') ?? ''))
      throw forbidden('The emulator answers only to 127.0.0.1 or localhost.');
    // Browsers send Sec-Fetch-Site (all current ones) and Origin (on cross-origin and unsafe
    // requests); the CLI and tests send neither.
    const site = req.header('sec-fetch-site');
    const origin = req.header('origin');
    if (
      (site !== undefined && site !== 'same-origin' && site !== 'none') ||
      (origin !== undefined && !origins.has(origin))
    )
      throw forbidden(
        "The emulator's API answers only its own web console and local tools, not other sites' pages.",
      );
    if (req.method !== 'GET' && !/^application\/json\s*(;|$)/i.test(req.header('content-type') ?? ''))
      throw new ApiProblem({
        status: 415,
        slug: 'json-only',
        title: 'Unsupported Media Type',
        detail: 'Send changes as application/json.',
      });
  };
}

/** A JSON object or array body, as `express.json()` took it; `{}` when there is none. */
async function jsonBody(req: EmulatorRequest): Promise<unknown> {
  const text = await req.text(256 * 1024);
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null)
    throw new ApiProblem({
      status: 400,
      slug: 'control-error',
      title: 'Error',
      detail: 'The body is not valid JSON.',
    });
  return value;
}

/** The emulator's own API, under `/_emulator`: what the web console and the CLI use. */
export function controlApi(emulator: Emulator): EmulatorRouter {
  const api = new EmulatorRouter();
  const created = (res: ServerResponse, result: ReturnType<Emulator['emit']>) =>
    sendJson(res, 201, { event: result.event, webhookIds: result.deliveries.map((d) => d.webhookId) });

  api.get('/_emulator/state', (_req, res) => sendJson(res, 200, emulatorState(emulator)));
  api.get('/_emulator/account', (_req, res) => sendJson(res, 200, emulator.account));
  api.get('/_emulator/stream', sseStream(emulator));

  api.post('/_emulator/events', async (req, res) => {
    const body = triggerBody.safeParse(await jsonBody(req));
    if (!body.success) throw fieldProblem(body.error, 'invalid-trigger', 'Field');
    const { type, layout, data, id } = body.data;
    if (!isEventType(type)) {
      const hint = didYouMean(type, EVENT_TYPES);
      throw new ApiProblem({
        status: 400,
        slug: 'unknown-event-type',
        title: 'Bad Request',
        detail: `Unknown event type "${type}"${hint ? `; did you mean "${hint}"?` : ''}`,
        field: 'type',
      });
    }
    created(res, emulator.emit(type, data ?? {}, { ...(layout ? { layout } : {}), ...(id ? { id } : {}) }));
  });

  // An event as recorded or built, delivered as is (a scenario's delivery, `trigger --scenario`).
  api.post('/_emulator/deliveries', async (req, res) => {
    const body = await jsonBody(req);
    let event: DeliveryEnvelope;
    try {
      event = parseScenario({ scenarioVersion: SCENARIO_VERSION, deliveries: [body] }, 'delivery')
        .deliveries[0]!.event;
    } catch (error) {
      throw new ApiProblem({
        status: 400,
        slug: 'invalid-delivery',
        title: 'Bad Request',
        detail: (error as Error).message.replace(/^\[service-webhooks\] delivery: deliveries\[0\]\.?/, ''),
      });
    }
    created(res, emulator.deliver(event));
  });

  api.get('/_emulator/scenario', (_req, res) =>
    sendJson(res, 200, eventsScenario(emulator), {
      'Content-Disposition': 'attachment; filename="scenario.json"',
    }),
  );

  api.get('/_emulator/events/:id', (req, res) => {
    const event = emulator.events.find((e) => e.id === req.params.id);
    if (event === undefined) throw notFound(`event ${req.params.id} is kept`);
    sendJson(res, 200, eventView(emulator, event));
  });

  api.post('/_emulator/events/:id/resend', (req, res) => {
    const result = emulator.resend(req.params.id as string);
    if (result === undefined) throw notFound(`event ${req.params.id} is kept`);
    created(res, result);
  });

  api.post('/_emulator/webhooks', async (req, res) => {
    const body = webhookBody.safeParse(await jsonBody(req));
    if (!body.success) throw fieldProblem(body.error, 'invalid-webhook', 'Field');
    let webhook: Awaited<ReturnType<Emulator['registerWebhook']>>;
    try {
      webhook = await emulator.registerWebhook(body.data);
    } catch (error) {
      throw new ApiProblem({
        status: 400,
        slug: 'invalid-webhook',
        title: 'Bad Request',
        detail: (error as Error).message,
      });
    }
    sendJson(res, 201, withoutKey(webhook));
  });

  api.post('/_emulator/webhooks/:id/handshake', async (req, res) => {
    const id = req.params.id as string;
    if (emulator.getWebhook(id) === undefined) throw notFound(`webhook ${id}`);
    sendJson(res, 200, withoutKey(await emulator.handshake(id)));
  });

  api.delete('/_emulator/webhooks/:id', (req, res) => {
    if (!emulator.deleteWebhook(req.params.id as string)) throw notFound(`webhook ${req.params.id}`);
    sendEmpty(res);
  });
  return api;
}
