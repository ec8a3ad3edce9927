import type { ServerResponse } from 'node:http';
import { createBody, listQuery, toWire } from './console-api-wire';
import { fieldProblem } from './field-problem';
import { signedRequest } from './signed-request';
import { ApiProblem } from './api-problem';
import { EmulatorRouter, sendEmpty, sendJson, type EmulatorRequest } from './emulator-router';
import type { ConsoleBackend } from './console-backend';
import type { AuthMethod } from '../console/console-wire';

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
export function consoleApi(backend: ConsoleBackend): EmulatorRouter {
  const api = new EmulatorRouter();
  const check = signedRequest(backend.accounts);
  // The signature covers the exact bytes, so the body is read as text and checked before anything.
  const signed =
    (handle: (req: EmulatorRequest, res: ServerResponse, accountId: string, body: string) => unknown) =>
    async (req: EmulatorRequest, res: ServerResponse) => {
      const body = req.method === 'POST' ? await req.text(64 * 1024) : '';
      return handle(req, res, check(req, body), body);
    };

  api.get(
    '/v1/console/webhooks',
    signed((req, res, accountId) => {
      const query = listQuery.safeParse(Object.fromEntries(req.query));
      if (!query.success) throw fieldProblem(query.error, 'invalid-query', 'Query parameter');
      const { page, per_page } = query.data;
      const all = backend.webhooksOf(accountId);
      const items = all.slice((page - 1) * per_page, page * per_page).map(toWire);
      sendJson(res, 200, {
        webhooks: items,
        pagination: {
          page,
          per_page,
          total_count: all.length,
          total_pages: Math.ceil(all.length / per_page),
        },
      });
    }),
  );

  api.post(
    '/v1/console/webhooks',
    signed((_req, res, accountId, text) => {
      const body = createBody.safeParse(parseJson(text));
      if (!body.success) throw fieldProblem(body.error, 'invalid-webhook', 'Field');
      const { name, url, auth_method, subscribed_events } = body.data;
      const webhook = backend.create(accountId, {
        name,
        url,
        authMethod: (auth_method ?? 'bearer_token') as AuthMethod,
        subscribedEvents: subscribed_events,
      });
      sendJson(res, 201, { ...toWire(webhook), private_key: webhook.privateKey });
    }),
  );

  api.delete(
    '/v1/console/webhooks/:id',
    signed((req, res, accountId) => {
      if (!backend.remove(accountId, req.params.id as string)) throw notFound(req.params.id as string);
      sendEmpty(res);
    }),
  );

  api.post(
    '/v1/console/webhooks/:id/verify',
    signed((req, res, accountId) => {
      const result = backend.verify(accountId, req.params.id as string);
      if (result === undefined) throw notFound(req.params.id as string);
      sendJson(res, result.status, { id: result.id, verified: result.verified });
    }),
  );
  return api;
}
