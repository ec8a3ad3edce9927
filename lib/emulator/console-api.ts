import express, { type Router } from 'express';
import { createBody, listQuery, toWire } from './console-api-wire';
import { fieldProblem } from './field-problem';
import { signedRequest } from './signed-request';
import { ApiProblem, sendApiProblem } from './api-problem';
import type { AuthMethod, EmulatedWebhook, RegisterWebhookInput } from './emulator-types';

export interface ConsoleAccount {
  accountId: string;
  secretKey: string;
}

/** What the console API needs of the emulator. */
export interface ConsoleBackend {
  accounts: ReadonlyMap<string, ConsoleAccount>;
  webhooksOf(accountId: string): EmulatedWebhook[];
  create(accountId: string, input: RegisterWebhookInput): EmulatedWebhook;
  remove(accountId: string, id: string): boolean;
  verify(accountId: string, id: string): { id: string; verified: boolean; status: 200 | 202 } | undefined;
}

const notFound = (id: string) =>
  new ApiProblem({
    status: 404,
    slug: 'webhook-not-found',
    title: 'Not Found',
    detail: `No webhook ${id} on this account.`,
  });

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text === '' ? '{}' : text);
  } catch {
    throw new ApiProblem({
      status: 400,
      slug: 'invalid-json',
      title: 'Bad Request',
      detail: 'The body is not valid JSON.',
    });
  }
}

/** The console API of spec section 4, as the emulator serves it. */
export function consoleApi(backend: ConsoleBackend): Router {
  const router = express.Router();
  // The signature covers the exact bytes, so the body is kept as text.
  router.use(express.text({ type: () => true, limit: '64kb' }), signedRequest(backend));

  router.get('/v1/console/webhooks', (req, res) => {
    const query = listQuery.safeParse(req.query);
    if (!query.success) throw fieldProblem(query.error, 'invalid-query', 'Query parameter');
    const { page, per_page } = query.data;
    const all = backend.webhooksOf(res.locals.accountId as string);
    const items = all.slice((page - 1) * per_page, page * per_page).map(toWire);
    res.json({
      webhooks: items,
      pagination: { page, per_page, total_count: all.length, total_pages: Math.ceil(all.length / per_page) },
    });
  });

  router.post('/v1/console/webhooks', (req, res) => {
    const body = createBody.safeParse(parseJson(req.body as string));
    if (!body.success) throw fieldProblem(body.error, 'invalid-webhook', 'Field');
    const { name, url, auth_method, subscribed_events } = body.data;
    const webhook = backend.create(res.locals.accountId as string, {
      name,
      url,
      authMethod: (auth_method ?? 'bearer_token') as AuthMethod,
      subscribedEvents: subscribed_events,
    });
    res.status(201).json({ ...toWire(webhook), private_key: webhook.privateKey });
  });

  router.delete('/v1/console/webhooks/:id', (req, res) => {
    if (!backend.remove(res.locals.accountId as string, req.params.id as string))
      throw notFound(req.params.id as string);
    res.status(204).end();
  });

  router.post('/v1/console/webhooks/:id/verify', (req, res) => {
    const result = backend.verify(res.locals.accountId as string, req.params.id as string);
    if (result === undefined) throw notFound(req.params.id as string);
    res.status(result.status).json({ id: result.id, verified: result.verified });
  });

  router.use(((error, _req, res, _next) => {
    const problem =
      error instanceof ApiProblem
        ? error
        : (error as { type?: string }).type === 'entity.too.large'
          ? new ApiProblem({
              status: 413,
              slug: 'body-too-large',
              title: 'Content Too Large',
              detail: 'The body is over 64 KiB.',
            })
          : new ApiProblem({
              status: 500,
              slug: 'internal-error',
              title: 'Internal Server Error',
              detail: 'The emulator failed.',
            });
    sendApiProblem(res, problem);
  }) as express.ErrorRequestHandler);
  return router;
}
