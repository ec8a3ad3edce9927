import http from 'node:http';
import express from 'express';
import request from 'supertest';
import {
  createEventRouter,
  dispatchEvent,
  MemoryStore,
  OptionsError,
  readCloudEvent,
  webhookReceiver,
  type DeliveryRecord,
  type EventRouter,
  type IdempotencyStore,
  type WebhookReceiverOptions,
  problemHandler,
  RetryLater,
} from '../lib';
import { buildEvent, DELIVERY_HEADERS, sendEvent } from '../lib/testing';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { captureLogger } from './support/capture-logger';
import { gate } from './support/gate';
import { listen } from './support/listen';
import { pollUntil } from './support/poll-until';

const TOKEN = 'tok_dispatch';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function receiverApp(router: EventRouter, options: Partial<WebhookReceiverOptions> = {}) {
  const logger = captureLogger();
  const receiver = webhookReceiver({ bearerTokens: [TOKEN], router, logger, timeoutMs: 200, ...options });
  const app = express();
  app.use(receiver);
  return { app, logger, receiver };
}

function deferred() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('dispatchEvent: the delivery contract', () => {
  it('answers 200 only after every handler finished', async () => {
    const finished: string[] = [];
    const started = gate('the slow handler started');
    const release = deferred();
    const router = createEventRouter()
      .on('ag.hid_org.created', async () => {
        started.open();
        await release.promise;
        finished.push('slow');
      })
      .on('ag.hid_org.created', () => void finished.push('fast'), { name: 'fast' });
    const { app } = receiverApp(router, { timeoutMs: 5000 });
    const event = buildEvent('ag.hid_org.created');
    let answered = false;
    const sent = sendEvent(app, event, { token: TOKEN }).then((r) => ((answered = true), r));
    await started.opened;
    await pollUntil('the fast handler finished', () => finished.includes('fast'));
    // The fast handler is done, the slow one held by the test: no answer yet.
    expect(answered).toBe(false);
    release.resolve();
    const res = await sent;
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: event.id, type: 'ag.hid_org.created', status: 'processed' });
    expect(finished.sort()).toEqual(['fast', 'slow']);
  });

  it('answers 500 when one of several handlers throws, tells onError and the logger, and hides the error', async () => {
    const errors: unknown[] = [];
    const ran: string[] = [];
    const router = createEventRouter()
      .on('ag.hid_org.created', () => void ran.push('ok'), { name: 'ok' })
      .on('ag.hid_org.created', async function leaks() {
        throw new Error('token=abc123 in /srv/secret');
      })
      .onError((error, event) => void errors.push([String(error), event.type]));
    const { app, logger } = receiverApp(router);
    const res = await sendEvent(app, buildEvent('ag.hid_org.created'), { token: TOKEN }).expect(500);
    expect(res.body).toMatchObject({ status: 500, title: 'Internal Server Error' });
    expect(JSON.stringify(res.body)).not.toMatch(/abc123|secret/);
    expect(ran).toEqual(['ok']);
    expect(errors).toEqual([['Error: token=abc123 in /srv/secret', 'ag.hid_org.created']]);
    expect(logger.messages('error')).toContain(
      '[service-webhooks] a handler failed; answering 500 so the Service retries the event',
    );
  });

  it('answers 503 with Retry-After past timeoutMs, and aborts the signal', async () => {
    let aborted = false;
    // Held until the answer is in: the handler outlasts timeoutMs by construction, not by a longer sleep.
    const release = deferred();
    const router = createEventRouter().on('ag.hid_org.created', async (_event, { signal }) => {
      await release.promise;
      aborted = signal.aborted;
    });
    const { app, receiver } = receiverApp(router, { idempotency: false });
    const res = await sendEvent(app, buildEvent('ag.hid_org.created'), { token: TOKEN }).expect(503);
    expect(res.headers['retry-after']).toBe('30');
    expect(res.body.title).toBe('Service Unavailable');
    release.resolve();
    await receiver.drain();
    expect(aborted).toBe(true);
  });

  it('still answers 500 when an onError handler throws', async () => {
    const router = createEventRouter()
      .on('ag.hid_org.created', () => {
        throw new Error('x');
      })
      .onError(() => {
        throw new Error('onError broke');
      });
    const { app, logger } = receiverApp(router);
    await sendEvent(app, buildEvent('ag.hid_org.created'), { token: TOKEN }).expect(500);
    expect(logger.messages('error')).toContain('[service-webhooks] an onError handler threw');
  });

  it.each([
    [
      'RetryLater with its own Retry-After',
      () => new RetryLater('rate limited', { retryAfterSeconds: 7 }),
      503,
      '7',
    ],
    ['RetryLater with the default', () => new RetryLater(), 503, '30'],
    ['any other error', () => new Error('boom'), 500, undefined],
  ])(
    'answers a handler that throws %s, and never acknowledges it',
    async (_name, error, status, retryAfter) => {
      let runs = 0;
      const router = createEventRouter().on('ag.hid_org.created', () => {
        runs++;
        throw error();
      });
      const { app } = receiverApp(router);
      const event = buildEvent('ag.hid_org.created');
      const res = await sendEvent(app, event, { token: TOKEN }).expect(status);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.headers['retry-after']).toBe(retryAfter);
      // Not acknowledged: the next delivery runs the handler again.
      await sendEvent(app, event, { token: TOKEN }).expect(status);
      expect(runs).toBe(2);
    },
  );

  it('gives handlers no way to answer: the context has no response', async () => {
    let keys: string[] = [];
    const router = createEventRouter().on('ag.hid_org.created', (_event, ctx) => {
      keys = Object.keys(ctx);
      expect(ctx.header('user-agent')).toBe('Service-Webhooks/1.0');
    });
    const { app } = receiverApp(router);
    await sendEvent(app, buildEvent('ag.hid_org.created'), { token: TOKEN }).expect(200);
    expect(keys).not.toContain('res');
    expect(keys).not.toContain('req');
  });

  it('never answers 202 or 204 for an event', async () => {
    const router = createEventRouter()
      .on('ag.hid_org.created', async () => sleep(5))
      .on('ag.hid_org.activated', () => {
        throw new Error('x');
      });
    const { app } = receiverApp(router);
    const statuses = [];
    for (const type of ['ag.hid_org.created', 'ag.hid_org.activated', 'ag.landing_page.created'] as const) {
      statuses.push((await sendEvent(app, buildEvent(type), { token: TOKEN })).status);
    }
    expect(statuses).toEqual([200, 500, 200]);
  });

  it('composes with readCloudEvent in an app’s own pipeline', async () => {
    const seen: string[] = [];
    const router = createEventRouter().on('ag.hid_org.created', (e) => void seen.push(e.id));
    const app = express();
    app.post(
      '/hooks',
      readCloudEvent({ logger: false }),
      (req, _res, next) => next(),
      dispatchEvent(router, { logger: false }),
    );
    app.use(problemHandler({ logger: false }));
    const event = buildEvent('ag.hid_org.created');
    await request(app)
      .post('/hooks')
      .set('Content-Type', 'application/cloudevents+json')
      .send(JSON.stringify(event))
      .expect(200);
    expect(seen).toEqual([event.id]);
  });

  it.each([
    ['a router that is not one', () => dispatchEvent({} as never)],
    ['a zero timeout', () => dispatchEvent(createEventRouter(), { timeoutMs: 0 })],
    [
      'a lease shorter than the timeout',
      () => dispatchEvent(createEventRouter(), { timeoutMs: 5000, idempotency: { leaseMs: 1000 } }),
    ],
    [
      'a store missing methods',
      () => dispatchEvent(createEventRouter(), { idempotency: { claim: () => undefined } as never }),
    ],
    ['a numeric scope', () => dispatchEvent(createEventRouter(), { idempotency: { scope: 7 as never } })],
  ])('throws at construction for %s', (_name, build) => {
    expect(build).toThrow(OptionsError);
  });
});

describe('dispatchEvent: idempotency', () => {
  it('first delivery claims, runs, marks done; a redelivery answers 200 duplicate without running handlers', async () => {
    let runs = 0;
    const store = new MemoryStore({ logger: false });
    const router = createEventRouter().on('ag.hid_org.created', () => void runs++);
    const { app } = receiverApp(router, { idempotency: store });
    const event = buildEvent('ag.hid_org.created');
    await sendEvent(app, event, { token: TOKEN }).expect(200, {
      id: event.id,
      type: event.type,
      status: 'processed',
    });
    expect(await store.get(idempotencyKey('', event.source, event.id))).toBe('done');
    const again = await sendEvent(app, event, { token: TOKEN }).expect(200);
    expect(again.body).toEqual({ id: event.id, type: event.type, status: 'duplicate' });
    expect(runs).toBe(1);
  });

  it('keys on source + id: the same id from another source is another event', async () => {
    let runs = 0;
    const { app } = receiverApp(createEventRouter().on('ag.hid_org.created', () => void runs++));
    await sendEvent(app, buildEvent('ag.hid_org.created', {}, { id: 'same', origin: 'one' }), {
      token: TOKEN,
    }).expect(200);
    await sendEvent(app, buildEvent('ag.hid_org.created', {}, { id: 'same', origin: 'two' }), {
      token: TOKEN,
    }).expect(200);
    expect(runs).toBe(2);
  });

  it('answers 409 + Retry-After to a redelivery while the first is still running; handlers never overlap', async () => {
    const started = gate("the first delivery's handler started");
    const release = deferred();
    let running = 0;
    let maxRunning = 0;
    const router = createEventRouter().on('ag.hid_org.created', async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      started.open();
      await release.promise;
      running--;
    });
    const { app } = receiverApp(router, { timeoutMs: 5000 });
    const event = buildEvent('ag.hid_org.created');
    const first = sendEvent(app, event, { token: TOKEN }).then((r) => r);
    await started.opened;
    const second = await sendEvent(app, event, { token: TOKEN }).expect(409);
    expect(second.headers['retry-after']).toBe('30');
    release.resolve();
    expect((await first).status).toBe(200);
    expect(maxRunning).toBe(1);
  });

  it('releases the claim after a failure, so the next attempt runs the handlers again', async () => {
    let attempts = 0;
    const router = createEventRouter().on('ag.hid_org.created', () => {
      if (++attempts === 1) throw new Error('transient');
    });
    const { app } = receiverApp(router);
    const event = buildEvent('ag.hid_org.created');
    await sendEvent(app, event, { token: TOKEN }).expect(500);
    await sendEvent(app, event, { token: TOKEN }).expect(200, {
      id: event.id,
      type: event.type,
      status: 'processed',
    });
    await sendEvent(app, event, { token: TOKEN }).expect(200, {
      id: event.id,
      type: event.type,
      status: 'duplicate',
    });
    expect(attempts).toBe(2);
  });

  it('after a timeout, handlers that then succeed mark the event done', async () => {
    let runs = 0;
    // The handler runs on past the 503 until the test releases it: the redelivery meets it running.
    const release = deferred();
    const router = createEventRouter().on('ag.hid_org.created', async () => {
      runs++;
      await release.promise;
    });
    const { app, receiver } = receiverApp(router, { timeoutMs: 100 });
    const event = buildEvent('ag.hid_org.created');
    await sendEvent(app, event, { token: TOKEN }).expect(503);
    await sendEvent(app, event, { token: TOKEN }).expect(409);
    release.resolve();
    await receiver.drain();
    await sendEvent(app, event, { token: TOKEN }).expect(200, {
      id: event.id,
      type: event.type,
      status: 'duplicate',
    });
    expect(runs).toBe(1);
  });

  it('after a timeout, handlers that then fail release the event for the next attempt', async () => {
    let runs = 0;
    const release = deferred();
    const router = createEventRouter().on('ag.hid_org.created', async () => {
      runs++;
      if (runs === 1) {
        await release.promise;
        throw new Error('late failure');
      }
    });
    const { app, receiver } = receiverApp(router, { timeoutMs: 100 });
    const event = buildEvent('ag.hid_org.created');
    await sendEvent(app, event, { token: TOKEN }).expect(503);
    release.resolve();
    await receiver.drain();
    await sendEvent(app, event, { token: TOKEN }).expect(200, {
      id: event.id,
      type: event.type,
      status: 'processed',
    });
    expect(runs).toBe(2);
  });

  it('a client hanging up mid-processing changes nothing, and leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    let server: Awaited<ReturnType<typeof listen>> | undefined;
    try {
      let runs = 0;
      const started = gate('the handler started');
      const release = deferred();
      const router = createEventRouter().on('ag.hid_org.created', async () => {
        runs++;
        started.open();
        await release.promise;
      });
      const { app, receiver } = receiverApp(router, { timeoutMs: 5000 });
      const closed = gate('the receiver finished with the hung-up response');
      server = await listen((req: http.IncomingMessage, res: http.ServerResponse) => {
        res.on('close', () => closed.open());
        app(req, res);
      });
      const event = buildEvent('ag.hid_org.created');
      const hangUp = new AbortController();
      const hungUp = fetch(server.url, {
        method: 'POST',
        headers: { ...DELIVERY_HEADERS, authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify(event),
        signal: hangUp.signal,
      });
      await started.opened;
      hangUp.abort();
      await expect(hungUp).rejects.toThrow(/abort/i);
      release.resolve();
      await receiver.drain();
      await closed.opened;
      await sendEvent(app, event, { token: TOKEN }).expect(200, {
        id: event.id,
        type: event.type,
        status: 'duplicate',
      });
      expect(runs).toBe(1);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await server?.close();
    }
  });

  it.each(['claim', 'markDone', 'release', 'get'] as const)(
    'a store whose %s is unavailable never loses an event',
    async (method) => {
      const memory = new MemoryStore({ logger: false });
      const broken: IdempotencyStore = {
        claim: (...args) => memory.claim(...args),
        markDone: (...args) => memory.markDone(...args),
        release: (...args) => memory.release(...args),
        get: (...args) => memory.get(...args),
        [method]: async () => {
          throw new Error('ECONNREFUSED');
        },
      };
      let runs = 0;
      const router = createEventRouter().on('ag.hid_org.created', () => void runs++);
      const { app } = receiverApp(router, { idempotency: broken });
      const res = await sendEvent(app, buildEvent('ag.hid_org.created'), { token: TOKEN });
      if (method === 'claim') {
        expect(res.status).toBe(503);
        expect(res.headers['retry-after']).toBe('30');
        expect(runs).toBe(0);
      } else {
        // The handlers ran and succeeded: acknowledging is right even if recording it failed.
        expect(res.status).toBe(200);
        expect(runs).toBe(1);
      }
    },
  );

  it('scopes keys by receiver name, so two receivers sharing a store do not share events', async () => {
    const store = new MemoryStore({ logger: false });
    const runs: string[] = [];
    const app = express();
    app.use(
      '/a',
      webhookReceiver({
        bearerTokens: [TOKEN],
        router: createEventRouter().on('ag.hid_org.created', () => void runs.push('a')),
        idempotency: { store, scope: 'a' },
        logger: false,
      }),
    );
    app.use(
      '/b',
      webhookReceiver({
        bearerTokens: [TOKEN],
        router: createEventRouter().on('ag.hid_org.created', () => void runs.push('b')),
        idempotency: { store, scope: 'b' },
        logger: false,
      }),
    );
    const event = buildEvent('ag.hid_org.created');
    await sendEvent(app, event, { token: TOKEN, path: '/a' }).expect(200);
    await sendEvent(app, event, { token: TOKEN, path: '/b' }).expect(200);
    expect((await sendEvent(app, event, { token: TOKEN, path: '/b' })).body.status).toBe('duplicate');
    expect(runs).toEqual(['a', 'b']);
  });

  it('with idempotency false, every delivery runs the handlers', async () => {
    let runs = 0;
    const { app } = receiverApp(
      createEventRouter().on('ag.hid_org.created', () => void runs++),
      { idempotency: false },
    );
    const event = buildEvent('ag.hid_org.created');
    await sendEvent(app, event, { token: TOKEN }).expect(200);
    await sendEvent(app, event, { token: TOKEN }).expect(200);
    expect(runs).toBe(2);
  });

  it('drain waits for handlers still running after a timeout', async () => {
    let finished = false;
    const release = deferred();
    const router = createEventRouter().on('ag.hid_org.created', async () => {
      await release.promise;
      finished = true;
    });
    const { app, receiver } = receiverApp(router, { timeoutMs: 50 });
    await sendEvent(app, buildEvent('ag.hid_org.created'), { token: TOKEN }).expect(503);
    // Nothing can have finished it (the test holds it): drain must still be waiting.
    let drained = false;
    const draining = receiver.drain().then(() => void (drained = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect([finished, drained]).toEqual([false, false]);
    release.resolve();
    await draining;
    expect(finished).toBe(true);
  });
});

describe('the handler by name', () => {
  it.each([
    ['one handler, named by its function', false],
    ['one of several, each named', true],
  ])('%s: ctx.handler, the failure log line and onError name it', async (_case, several) => {
    const seen: string[] = [];
    const told: string[] = [];
    let router = createEventRouter().on('ag.hid_org.created', async function syncCrm(_e, ctx) {
      seen.push(ctx.handler);
      throw new Error('the CRM said no');
    });
    if (several) router = router.onAny((_e, ctx) => void seen.push(ctx.handler), { name: 'audit' });
    router.onError((_error, _event, ctx) => void told.push(ctx.handler));
    const { app, logger } = receiverApp(router);
    await sendEvent(app, buildEvent('ag.hid_org.created'), { token: TOKEN }).expect(500);
    expect(seen.sort()).toEqual(several ? ['audit', 'syncCrm'] : ['syncCrm']);
    expect(told).toEqual(['syncCrm']);
    const failure = logger.records.filter((r) => r.level === 'error' && /a handler failed/.test(r.message));
    expect(failure.map((r) => r.meta.handler)).toEqual(['syncCrm']);
  });
});

describe('the handler by name, in the record, onError, the log line and its attempt', () => {
  it('names each handler with how it fared: ok, failed, skipped-done, skipped-stale, timeout', async () => {
    const records: DeliveryRecord[] = [];
    const told: string[] = [];
    let emailTries = 0;
    let hang = false;
    const router = createEventRouter()
      .on('ag.access_pass.updated', () => undefined, { name: 'projection', ordering: 'newest-wins' })
      .on(
        'ag.access_pass.updated',
        async () => {
          if (hang) await new Promise(() => undefined);
          if (++emailTries === 1) throw new Error('the mail server said no');
        },
        { name: 'email' },
      )
      .onError((_error, _event, ctx) => void told.push(`${ctx.handler}:${ctx.attempt}`));
    const { app, logger } = receiverApp(router, { onDelivery: (record) => void records.push(record) });
    const at = (id: string, time: string) => ({
      ...buildEvent('ag.access_pass.updated', { id: 'pass-named' }, { id }),
      time,
    });
    await sendEvent(app, at('evt_new', '2026-01-01T10:00:00Z'), { token: TOKEN }).expect(500);
    await sendEvent(app, at('evt_new', '2026-01-01T10:00:00Z'), { token: TOKEN }).expect(200);
    await sendEvent(app, at('evt_old', '2026-01-01T09:00:00Z'), { token: TOKEN }).expect(200);
    hang = true;
    await sendEvent(app, at('evt_hung', '2026-01-01T11:00:00Z'), { token: TOKEN }).expect(503);
    const shape = (r: DeliveryRecord) =>
      (r.handlers ?? []).map((h) => [h.handler, h.outcome, h.attempt, h.durationMs === null ? null : 'ms']);
    expect(records.map(shape)).toEqual([
      [
        ['projection', 'ok', 1, 'ms'],
        ['email', 'failed', 1, 'ms'],
      ],
      [
        ['projection', 'skipped-done', null, null],
        ['email', 'ok', 2, 'ms'],
      ],
      [
        ['projection', 'skipped-stale', null, null],
        ['email', 'ok', 1, 'ms'],
      ],
      [
        ['projection', 'ok', 1, 'ms'],
        ['email', 'timeout', 1, 'ms'],
      ],
    ]);
    expect(told).toEqual(['email:1']);
    const failure = logger.records.filter((r) => r.level === 'error' && /a handler failed/.test(r.message));
    expect(failure.map((r) => [r.meta.handler, r.meta.attempt])).toEqual([['email', 1]]);
  });

  it('has no handlers on a record where none was decided: a duplicate, a refusal', async () => {
    const records: DeliveryRecord[] = [];
    const router = createEventRouter().on('ag.hid_org.created', () => undefined, { name: 'crm' });
    const { app } = receiverApp(router, { onDelivery: (record) => void records.push(record) });
    const event = buildEvent('ag.hid_org.created');
    await sendEvent(app, event, { token: TOKEN }).expect(200);
    await sendEvent(app, event, { token: TOKEN }).expect(200);
    await sendEvent(app, event, { token: 'wrong' }).expect(401);
    expect(records.map((r) => [r.outcome, r.handlers?.map((h) => `${h.handler}:${h.outcome}`)])).toEqual([
      ['processed', ['crm:ok']],
      ['duplicate', undefined],
      ['rejected', undefined],
    ]);
  });
});
