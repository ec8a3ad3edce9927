import { randomBytes } from 'node:crypto';
import express, { type Request, type RequestHandler, type Router } from 'express';
import { z } from 'zod';
import { verifyPayloadSignature } from '../console/sign-payload';
import { EVENT_TYPES } from '../events/catalogue';
import { fieldProblem } from './field-problem';
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

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

const createBody = z.object({
  name: z.string({ error: 'is required' }).trim().min(1, { error: 'must not be empty' }),
  url: z.url({ error: 'must be an absolute URL' }).refine(
    (url) => {
      const { protocol, hostname } = new URL(url);
      return protocol === 'https:' || (protocol === 'http:' && LOCAL_HOSTS.has(hostname));
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
const listQuery = z.object({ page: pageParam(Number.MAX_SAFE_INTEGER, 1), per_page: pageParam(100, 50) });

function toWire(webhook: EmulatedWebhook): Record<string, unknown> {
  return {
    id: webhook.id,
    name: webhook.name,
    url: webhook.url,
    auth_method: webhook.authMethod,
    subscribed_events: webhook.subscribedEvents,
    verified: webhook.verified,
  };
}

const unauthorized = (detail: string) =>
  new ApiProblem({ status: 401, slug: 'unsigned-request', title: 'Unauthorized', detail });
const notFound = (id: string) =>
  new ApiProblem({
    status: 404,
    slug: 'webhook-not-found',
    title: 'Not Found',
    detail: `No webhook ${id} on this account.`,
  });

/** The payload text that was signed: the raw body for POST, `sig_payload` for GET and DELETE. */
function signedText(req: Request): string | undefined {
  if (req.method === 'POST') return typeof req.body === 'string' ? req.body : '';
  const value = req.query.sig_payload;
  return typeof value === 'string' ? value : undefined;
}

/** Checked against when the account is unknown, so both refusals take the same time. */
const NO_ACCOUNT_SECRET = randomBytes(32).toString('hex');
const REFUSED =
  'X-ACCT-ID and X-PAYLOAD-SIG do not match an account and its signature of the payload (spec 5.1).';

/**
 * Spec 5.1, checked over the exact bytes received, before anything else. An unknown account and a
 * wrong signature get the same answer, after the same work: the 401 must not tell which accounts exist.
 */
function signedRequest(backend: ConsoleBackend): RequestHandler {
  return function signedRequest(req, res, next) {
    const text = signedText(req);
    if (text === undefined)
      return next(unauthorized('GET and DELETE must carry the signed payload as sig_payload.'));
    const accountId = req.get('X-ACCT-ID');
    const account = accountId === undefined ? undefined : backend.accounts.get(accountId);
    const signed = verifyPayloadSignature(
      text,
      account?.secretKey ?? NO_ACCOUNT_SECRET,
      req.get('X-PAYLOAD-SIG'),
    );
    if (account === undefined || !signed) return next(unauthorized(REFUSED));
    res.locals.accountId = account.accountId;
    next();
  };
}

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
