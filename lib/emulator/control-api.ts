import express, { type RequestHandler, type Router } from 'express';
import { z } from 'zod';
import { didYouMean } from '../did-you-mean';
import { EVENT_TYPES, isEventType } from '../events/catalogue';
import { ApiProblem, sendApiProblem } from './api-problem';
import type { Emulator } from './emulator';
import { emulatorState, eventView, withoutKey } from './emulator-state';
import { fieldProblem } from './field-problem';
import { sseStream } from './sse-stream';

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
function localOnly(port: number): RequestHandler {
  const hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
  const origins = new Set([...hosts].map((host) => `http://${host}`));
  const forbidden = (detail: string) =>
    new ApiProblem({ status: 403, slug: 'not-local', title: 'Forbidden', detail });
  return function localOnly(req, _res, next) {
    if (!hosts.has(req.get('host') ?? ''))
      return next(forbidden('The emulator answers only to 127.0.0.1 or localhost.'));
    // Browsers send Sec-Fetch-Site (all current ones) and Origin (on cross-origin and unsafe
    // requests); the CLI and tests send neither.
    const site = req.get('sec-fetch-site');
    const origin = req.get('origin');
    if (
      (site !== undefined && site !== 'same-origin' && site !== 'none') ||
      (origin !== undefined && !origins.has(origin))
    )
      return next(
        forbidden(
          "The emulator's API answers only its own web console and local tools, not other sites' pages.",
        ),
      );
    if (req.method !== 'GET' && !req.is('application/json'))
      return next(
        new ApiProblem({
          status: 415,
          slug: 'json-only',
          title: 'Unsupported Media Type',
          detail: 'Send changes as application/json.',
        }),
      );
    next();
  };
}

/** The emulator's own API, under `/_emulator`: what the web console and the CLI use. */
export function controlApi(emulator: Emulator): Router {
  const router = express.Router();
  const api = express.Router();
  router.use(
    '/_emulator',
    localOnly(Number(new URL(emulator.url).port)),
    express.json({ limit: '256kb' }),
    api,
  );

  api.get('/state', (_req, res) => void res.json(emulatorState(emulator)));
  api.get('/account', (_req, res) => void res.json(emulator.account));
  api.get('/stream', sseStream(emulator));

  api.post('/events', (req, res) => {
    const body = triggerBody.safeParse(req.body ?? {});
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
    const result = emulator.emit(type, data ?? {}, { ...(layout ? { layout } : {}), ...(id ? { id } : {}) });
    res.status(201).json({ event: result.event, webhookIds: result.deliveries.map((d) => d.webhookId) });
  });

  api.get('/events/:id', (req, res) => {
    const event = emulator.events.find((e) => e.id === req.params.id);
    if (event === undefined) throw notFound(`event ${req.params.id} is kept`);
    res.json(eventView(emulator, event));
  });

  api.post('/events/:id/resend', (req, res) => {
    const result = emulator.resend(req.params.id as string);
    if (result === undefined) throw notFound(`event ${req.params.id} is kept`);
    res.status(201).json({ event: result.event, webhookIds: result.deliveries.map((d) => d.webhookId) });
  });

  api.post('/webhooks', async (req, res, next) => {
    const body = webhookBody.safeParse(req.body ?? {});
    if (!body.success) return next(fieldProblem(body.error, 'invalid-webhook', 'Field'));
    try {
      res.status(201).json(withoutKey(await emulator.registerWebhook(body.data)));
    } catch (error) {
      next(
        new ApiProblem({
          status: 400,
          slug: 'invalid-webhook',
          title: 'Bad Request',
          detail: (error as Error).message,
        }),
      );
    }
  });

  api.post('/webhooks/:id/handshake', async (req, res, next) => {
    if (emulator.getWebhook(req.params.id) === undefined) return next(notFound(`webhook ${req.params.id}`));
    res.json(withoutKey(await emulator.handshake(req.params.id)));
  });

  api.delete('/webhooks/:id', (req, res) => {
    if (!emulator.deleteWebhook(req.params.id)) throw notFound(`webhook ${req.params.id}`);
    res.status(204).end();
  });

  router.use(((error, _req, res, _next) => {
    const problem =
      error instanceof ApiProblem
        ? error
        : new ApiProblem({
            status: (error as { status?: number }).status === 400 ? 400 : 500,
            slug: 'control-error',
            title: 'Error',
            detail:
              (error as { status?: number }).status === 400
                ? 'The body is not valid JSON.'
                : 'The emulator failed.',
          });
    sendApiProblem(res, problem);
  }) as express.ErrorRequestHandler);
  return router;
}
