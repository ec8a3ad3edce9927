import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createEventRouter, MemoryStore, type IdempotencyStore, type Inbox } from '../lib';
import { createReceiverCore } from '../lib/core/receiver-core';
import { openTelemetryTracing } from '../lib/observability/open-telemetry-tracing';
import { ANSWERS_NOW } from '../lib/idempotency/answers-now';
import * as enqueueModule from '../lib/core/dispatch/enqueue-delivery';
import type { Outcome } from '../lib/core/dispatch/run-handlers';
import { buildEvent } from '../lib/testing';
import { coreRequest } from './support/core-request';
import { doorReceiver, tokenDelivery } from './support/door-receiver';
import { DOORS } from './support/doors';
import { pollUntil } from './support/poll-until';

const TOKEN = 'tok_dispatcher';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(DOORS)('the lease of a running event through $name', (door) => {
  const start = doorReceiver(door, TOKEN);

  it('answers 409 to redeliveries of a hung event after its lease ran out, and drain() reports it', async () => {
    let started = 0;
    const router = createEventRouter().on('ag.hid_org.created', () => {
      started++;
      return new Promise(() => undefined);
    });
    const { d } = await start({ router, timeoutMs: 30, idempotency: { leaseMs: 60 } });
    const event = buildEvent('ag.hid_org.created', {}, { id: 'evt_hung' });
    expect((await d.send(tokenDelivery(TOKEN, event))).status).toBe(503);
    await sleep(100);
    const again = await Promise.all([1, 2, 3].map(() => d.send(tokenDelivery(TOKEN, event))));
    expect(again.map((r) => r.status)).toEqual([409, 409, 409]);
    expect(started).toBe(1);
    const before = Date.now();
    await expect(d.drain({ timeoutMs: 150 })).resolves.toMatchObject({
      drained: false,
      running: ['evt_hung'],
    });
    expect(Date.now() - before).toBeLessThan(1000);
  });
});

describe('the store steps an event costs, by its number of handlers', () => {
  const start = doorReceiver(DOORS[0]!, TOKEN);

  /** A MemoryStore that counts the calls made to it. */
  function counted() {
    const memory = new MemoryStore({ logger: false });
    const calls: string[] = [];
    const store: IdempotencyStore = {
      claim: (...args) => (calls.push('claim'), memory.claim(...args)),
      claimHandlers: (...args) => (calls.push('claimHandlers'), memory.claimHandlers(...args)),
      markHandlerDone: (...args) => (calls.push('markHandlerDone'), memory.markHandlerDone(...args)),
      markDone: (...args) => (calls.push('markDone'), memory.markDone(...args)),
      release: (...args) => (calls.push('release'), memory.release(...args)),
      get: (...args) => (calls.push('get'), memory.get(...args)),
    };
    return { store, calls, close: () => memory.close() };
  }

  it.each([1, 2, 3, 4, 5])(
    '%i handler(s): a new event one claim and one markDone, plus one markHandlerDone per handler past the first; one failing, the same with a release, then its retry two',
    async (n) => {
      const { store, calls, close } = counted();
      let failLast = false;
      let router = createEventRouter();
      for (let i = 0; i < n; i++)
        router = router.on(
          'ag.hid_org.created',
          async () => {
            // The others settle first, so the one that fails is the last to.
            await new Promise((resolve) => setImmediate(resolve));
            if (i === n - 1 && failLast) throw new Error('once');
          },
          { name: `h${i}` },
        );
      const { d } = await start({ router, idempotency: store });
      const steps = async (id: string) => {
        calls.length = 0;
        const event = buildEvent('ag.hid_org.created', {}, { id });
        const { status } = await d.send(tokenDelivery(TOKEN, event));
        return [status, calls.join(' ')];
      };
      const extra = Array<string>(n - 1).fill('markHandlerDone');
      expect(await steps('evt_new')).toEqual([200, ['claimHandlers', ...extra, 'markDone'].join(' ')]);
      failLast = true;
      expect(await steps('evt_failing')).toEqual([500, ['claimHandlers', ...extra, 'release'].join(' ')]);
      failLast = false;
      expect(await steps('evt_failing')).toEqual([200, 'claimHandlers markDone']);
      close();
    },
  );
});

describe('a store that fails its claim', () => {
  const start = doorReceiver(DOORS[0]!, TOKEN);
  const failures = [
    { method: 'claim', how: 'throws', answersAtOnce: true },
    { method: 'claim', how: 'throws', answersAtOnce: false },
    { method: 'claim', how: 'rejects', answersAtOnce: true },
    { method: 'claimHandlers', how: 'throws', answersAtOnce: true },
    { method: 'claimHandlers', how: 'throws', answersAtOnce: false },
    { method: 'claimHandlers', how: 'rejects', answersAtOnce: true },
    { method: 'claimHandlers', how: 'rejects', answersAtOnce: false },
  ] as const;

  it.each(failures)(
    '$method $how (answersAtOnce $answersAtOnce): 503, no handler run, nothing acknowledged',
    async ({ method, how, answersAtOnce }) => {
      const memory = new MemoryStore({ logger: false });
      const fail = () => {
        if (how === 'throws') throw new Error('store down');
        return Promise.reject(new Error('store down'));
      };
      const store: IdempotencyStore = {
        answersAtOnce,
        claim: method === 'claim' ? fail : (...args) => memory.claim(...args),
        markDone: (...args) => memory.markDone(...args),
        release: (...args) => memory.release(...args),
        get: (...args) => memory.get(...args),
        // Recording handlers or not decides which claim the receiver makes.
        ...(method === 'claimHandlers'
          ? { claimHandlers: fail, markHandlerDone: (...args) => memory.markHandlerDone(...args) }
          : {}),
      };
      let runs = 0;
      const router = createEventRouter().on('ag.hid_org.created', () => void runs++);
      const { d } = await start({ router, idempotency: store, logger: false });
      const event = buildEvent('ag.hid_org.created', {}, { id: `evt_${method}_${how}` });
      const { status } = await d.send(tokenDelivery(TOKEN, event));
      expect([status, runs]).toEqual([503, 0]);
      expect(
        await memory.get(`0:${event.source.length}:${event.source}${event.id.length}:${event.id}`),
      ).toBeNull();
      memory.close();
    },
  );
});

describe('a MemoryStore answers the receiver at once, through its own steps only', () => {
  const start = doorReceiver(DOORS[0]!, TOKEN);
  const keyOf = (event: { source: string; id: string }) =>
    `0:${event.source.length}:${event.source}${event.id.length}:${event.id}`;

  /** A MemoryStore subclass that notes each of its async methods the receiver calls. */
  class NotedStore extends MemoryStore {
    readonly calls: string[] = [];
    override claimHandlers(...args: Parameters<MemoryStore['claimHandlers']>) {
      this.calls.push('claimHandlers');
      return super.claimHandlers(...args);
    }
    override markDone(...args: Parameters<MemoryStore['markDone']>) {
      this.calls.push('markDone');
      return super.markDone(...args);
    }
  }

  it('calls a subclass through its overrides, and a replaced method through the replacement', async () => {
    const sub = new NotedStore({ logger: false });
    const spied = new MemoryStore({ logger: false });
    const spiedCalls: string[] = [];
    const release = spied.release.bind(spied);
    spied.release = (...args) => (spiedCalls.push('release'), release(...args));
    let fail = true;
    const router = createEventRouter().on('ag.hid_org.created', () => {
      if (fail) throw new Error('once');
    });
    for (const [store, calls, expected] of [
      [sub, sub.calls, 'claimHandlers'],
      [spied, spiedCalls, 'release'],
    ] as const) {
      const { d } = await start({ router, idempotency: store, logger: false });
      fail = true;
      const event = buildEvent('ag.hid_org.created', {}, { id: `evt_noted_${expected}` });
      expect((await d.send(tokenDelivery(TOKEN, event))).status).toBe(500);
      fail = false;
      expect((await d.send(tokenDelivery(TOKEN, event))).status).toBe(200);
      expect(calls).toContain(expected);
      expect(await store.get(keyOf(event))).toBe('done');
      store.close();
    }
    expect(sub.calls).toEqual(['claimHandlers', 'claimHandlers', 'markDone']);
  });

  it('calls a method replaced after the receiver was built (a spy added in a test) through the replacement', async () => {
    const store = new MemoryStore({ logger: false });
    const router = createEventRouter().on('ag.hid_org.created', () => undefined);
    const { d } = await start({ router, idempotency: store, logger: false });
    const marked: string[] = [];
    const markDone = store.markDone.bind(store);
    store.markDone = (...args) => (marked.push(args[0]), markDone(...args));
    const event = buildEvent('ag.hid_org.created', {}, { id: 'evt_spied_later' });
    expect((await d.send(tokenDelivery(TOKEN, event))).status).toBe(200);
    expect(marked).toEqual([keyOf(event)]);
    expect(await store.get(keyOf(event))).toBe('done');
    store.close();
  });

  it.each([
    ['a synchronous handler', () => undefined],
    ['an async handler', async () => undefined],
  ])('%s: acknowledged once done in the store, a redelivery a duplicate', async (_name, handler) => {
    const store = new MemoryStore({ logger: false });
    let runs = 0;
    const router = createEventRouter().on('ag.hid_org.created', () => (runs++, handler()));
    const { d } = await start({ router, idempotency: store, logger: false });
    const event = buildEvent('ag.hid_org.created', {}, { id: 'evt_at_once' });
    const first = await d.send(tokenDelivery(TOKEN, event));
    expect([first.status, await store.get(keyOf(event))]).toEqual([200, 'done']);
    const again = await d.send(tokenDelivery(TOKEN, event));
    expect([again.status, (JSON.parse(again.text) as { status: string }).status, runs]).toEqual([
      200,
      'duplicate',
      1,
    ]);
    store.close();
  });

  it.each([
    [
      'a synchronous handler that throws',
      () => {
        throw new Error('sync failure');
      },
    ],
    ['an async handler that rejects', () => Promise.reject(new Error('async failure'))],
  ])(
    '%s: 500, not acknowledged, released and counted: the redelivery runs it again as attempt 2',
    async (_name, fails) => {
      const store = new MemoryStore({ logger: false });
      const attempts: number[] = [];
      let fail = true;
      const router = createEventRouter().on('ag.hid_org.created', (_event, ctx) => {
        attempts.push(ctx.attempt);
        return fail ? fails() : undefined;
      });
      const { d } = await start({ router, idempotency: store, logger: false });
      const event = buildEvent('ag.hid_org.created', {}, { id: 'evt_at_once_failing' });
      expect((await d.send(tokenDelivery(TOKEN, event))).status).toBe(500);
      expect(await store.get(keyOf(event))).toBeNull();
      fail = false;
      expect((await d.send(tokenDelivery(TOKEN, event))).status).toBe(200);
      expect(attempts).toEqual([1, 2]);
      store.close();
    },
  );

  it.each(['claim', 'markDone', 'release'] as const)(
    'its %s throwing at once is the store failing, as a rejection is',
    async (step) => {
      const store = new MemoryStore({ logger: false });
      const calls = store[ANSWERS_NOW]()!;
      const failing = {
        ...calls,
        [step === 'claim' ? 'claimHandlers' : step]: () => {
          throw new Error('store down');
        },
      };
      store[ANSWERS_NOW] = () => failing;
      let runs = 0;
      const router = createEventRouter().on('ag.hid_org.created', () => {
        runs++;
        if (step === 'release') throw new Error('handler failure');
      });
      const logged: string[] = [];
      const note = (_meta: unknown, message: string) => void logged.push(message);
      const logger = { debug() {}, info: note, warn: note, error: note };
      const { d } = await start({ router, idempotency: store, logger });
      const event = buildEvent('ag.hid_org.created', {}, { id: `evt_fails_${step}` });
      const { status } = await d.send(tokenDelivery(TOKEN, event));
      // A failed claim runs nothing; a failed markDone still answers the success, the key held
      // meanwhile, and is retried in the background through the store's own markDone; a failed
      // release answers the failure.
      const expected = {
        claim: [503, 0, null],
        markDone: [200, 1, 'processing'],
        release: [500, 1, 'processing'],
      }[step];
      expect([status, runs, await store.get(keyOf(event))]).toEqual(expected);
      expect(logged.join('\n')).toMatch(
        { claim: /unavailable/, markDone: /could not mark/, release: /could not release/ }[step],
      );
      if (step === 'markDone') {
        await pollUntil(
          'the markDone retried',
          () => logged.some((m) => /marked the event done on a retry/.test(m)),
          { describe: () => logged.join(' / ') },
        );
        expect(await store.get(keyOf(event))).toBe('done');
      }
      store.close();
    },
  );
});

/** An inbox of the test's own: `enqueue` is all the core calls on the way to its answer. */
function queuedCore(enqueue: Inbox['enqueue'], idempotency: IdempotencyStore | false) {
  const inbox = {
    engine: 'own',
    name: 'own',
    enqueue,
    startWorker: () => Promise.reject(new Error('not here')),
    deadLetters: async () => [],
    replay: async () => 0,
  } as unknown as Inbox;
  return createReceiverCore(
    { bearerTokens: [TOKEN], router: createEventRouter(), logger: false, idempotency, inbox },
    'test',
    openTelemetryTracing,
  );
}

describe('a delivery queued in an inbox', () => {
  // The answer waited on async frames around the enqueue (the inbox call's bound, the claim's settle,
  // the bookkeeping): 13 turns after the engine's reply, each held by all the requests in flight. Then
  // 7, while the bound, the settle, the dispatch's record and the door each had a .then of their own.
  it('is answered 200 within 4 microtask turns of its enqueue settling, its claim settled done', async () => {
    const store = new MemoryStore({ logger: false });
    let release: (() => void) | undefined;
    const receiver = queuedCore(() => new Promise<void>((resolve) => (release = resolve)), store);
    const event = buildEvent('ag.hid_org.created', {}, { id: 'evt_queued_turns' });
    const handled = receiver.handle(coreRequest(JSON.stringify(event), TOKEN));
    await pollUntil('the enqueue called', () => release !== undefined);
    release?.();
    let settled = false;
    void handled.then(() => (settled = true));
    let turns = 0;
    while (!settled && turns < 50) {
      await Promise.resolve();
      turns++;
    }
    expect(turns).toBeLessThanOrEqual(4);
    const { answer, record } = await handled;
    expect([answer.status, record.outcome]).toEqual([200, 'queued']);
    // The claim was settled done before the answer: a redelivery is a duplicate, not queued again.
    const again = await receiver.handle(coreRequest(JSON.stringify(event), TOKEN));
    expect([again.answer.status, again.record.outcome]).toEqual([200, 'duplicate']);
    store.close();
  });

  // Each enqueue's bound was a setTimeout and a clearTimeout of its own; the enqueues in flight now
  // share one timer, and each still times out at its own bound, answered 503, not acknowledged.
  it('bounds the enqueues in flight with one timer, each answered 503 at its bound and not queued', async () => {
    jest.useFakeTimers();
    try {
      const called: string[] = [];
      const receiver = queuedCore(async (delivery) => {
        called.push(delivery.id);
        return new Promise<void>(() => undefined);
      }, false);
      const timers = jest.getTimerCount();
      const ids = ['evt_bound_1', 'evt_bound_2', 'evt_bound_3'];
      const answers = ids.map((id) =>
        receiver.handle(coreRequest(JSON.stringify(buildEvent('ag.hid_org.created', {}, { id })), TOKEN)),
      );
      for (let turns = 0; called.length < ids.length && turns < 200; turns++) await Promise.resolve();
      expect({ called, timers: jest.getTimerCount() - timers }).toEqual({ called: ids, timers: 1 });
      jest.advanceTimersByTime(4_999);
      let answered = 0;
      for (const a of answers) void a.then(() => answered++);
      for (let turns = 0; turns < 50; turns++) await Promise.resolve();
      expect(answered).toBe(0);
      jest.advanceTimersByTime(1);
      const settled = await Promise.all(answers);
      expect(
        settled.map(({ answer, record }) => [answer.status, record.outcome, JSON.parse(answer.body).type]),
      ).toEqual(ids.map(() => [503, 'store-unavailable', 'urn:service-webhooks:problem:inbox-unavailable']));
      expect(jest.getTimerCount()).toBe(timers);
    } finally {
      jest.useRealTimers();
    }
  });

  // An Inbox is the app's to write. Its enqueue's outcome goes straight to the continuation that
  // frees the event, with no .then between, so an enqueue that answers within the call (no promise
  // at all, or a thenable that calls back at once) must still find its event held, and free it:
  // else every redelivery is a 409 and drain() never ends.
  // The redelivery's outcome: queued again without a store to remember the first, else a duplicate.
  const appEnqueues: [string, () => (delivery: unknown) => unknown, number, string, number, string[]][] = [
    [
      'hands back no promise the first time',
      () => {
        let calls = 0;
        return () => (++calls === 1 ? undefined : Promise.resolve());
      },
      503,
      'store-unavailable',
      200,
      ['queued', 'queued'],
    ],
    [
      'hands back a thenable that calls back at once',
      () => () => ({ then: (ok: () => void) => ok() }),
      200,
      'queued',
      200,
      ['queued', 'duplicate'],
    ],
  ];
  describe.each([
    ['no idempotency store', () => false as const],
    ['a MemoryStore', () => new MemoryStore({ logger: false })],
  ])('with %s', (_, idempotency) => {
    it.each(appEnqueues)(
      'an enqueue that %s: answered, its event freed, drain() over',
      async (_what, enqueue, firstStatus, firstOutcome, againStatus, againOutcome) => {
        const store = idempotency();
        const receiver = queuedCore(enqueue() as Inbox['enqueue'], store);
        const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt_app_enqueue' }));
        const first = await receiver.handle(coreRequest(body, TOKEN));
        const again = await receiver.handle(coreRequest(body, TOKEN));
        expect({
          first: [first.answer.status, first.record.outcome],
          again: [again.answer.status, again.record.outcome],
        }).toEqual({
          first: [firstStatus, firstOutcome],
          again: [againStatus, againOutcome[store === false ? 0 : 1]],
        });
        // Asked only once the event is known freed: with it held, idle() would spin on microtasks
        // and starve every timer, this test's bound included.
        expect(await receiver.drain({ timeoutMs: 1_000 })).toMatchObject({ drained: true });
        if (store !== false) store.close();
      },
    );
  });

  // Should an event ever be left held with its work settled (as one enqueuing within its call once
  // was), drain() must still end at its bound and name it, not spin on microtasks for ever. On the
  // code before, this test does not fail but hangs: the spin starves jest's own timers too.
  it('drain() ends at its bound and names an event left held with its work settled', async () => {
    const receiver = queuedCore(async () => undefined, false);
    const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt_left_held' }));
    // The enqueue's promise settles; its continuation, which frees the event, is never called.
    const lost = jest
      .spyOn(enqueueModule, 'enqueueDelivery')
      .mockReturnValueOnce(Promise.resolve() as ReturnType<typeof enqueueModule.enqueueDelivery>);
    const { answer } = await receiver.handle(coreRequest(body, TOKEN));
    lost.mockRestore();
    // Not acknowledged: a dispatch that came to nothing is a 500.
    expect(answer.status).toBe(500);
    expect(await receiver.drain({ timeoutMs: 300 })).toEqual({
      drained: false,
      requests: 0,
      running: ['evt_left_held'],
    });
  });

  // While Redis or PostgreSQL stalls, every delivery waits on its enqueue for up to storeTimeoutMs,
  // thousands at once under load. Each holds what its answer needs (the event's id and type) and the
  // queued delivery the engine was given, never the parsed envelope and the typed event built from it.
  /** A MemoryStore that answers through its promises only: the dispatcher's path for a remote store. */
  const answeringLater = () => {
    const store = new MemoryStore({ logger: false });
    store[ANSWERS_NOW] = () => undefined;
    return store;
  };
  it.each([
    ['a MemoryStore', () => new MemoryStore({ logger: false })],
    ['a store that answers in promises', answeringLater],
    ['no idempotency store', () => false as const],
  ])(
    'with %s, holds neither the typed event nor its parsed envelope while its enqueue is pending',
    async (_, idempotency) => {
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as () => void;
      let release: (() => void) | undefined;
      const store = idempotency();
      const receiver = queuedCore(() => new Promise<void>((resolve) => (release = resolve)), store);
      const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt_not_held' }));
      const seen: { event?: WeakRef<object>; raw?: WeakRef<object> } = {};
      const real = enqueueModule.enqueueDelivery;
      const watched = jest
        .spyOn(enqueueModule, 'enqueueDelivery')
        .mockImplementationOnce((...args: Parameters<typeof real>) => {
          seen.event = new WeakRef(args[2]);
          seen.raw = new WeakRef(args[2].raw);
          return real(...args);
        });
      const handled = receiver.handle(coreRequest(body, TOKEN));
      await pollUntil('the enqueue called', () => release !== undefined);
      // The spy's own record of the call holds the event: forgotten before looking.
      watched.mockRestore();
      for (let i = 0; i < 3; i++) {
        gc();
        await new Promise((resolve) => setImmediate(resolve));
      }
      const held = { event: seen.event?.deref() !== undefined, raw: seen.raw?.deref() !== undefined };
      release?.();
      const { answer, record } = await handled;
      if (store !== false) store.close();
      expect({ held, answer: [answer.status, record.outcome, JSON.parse(answer.body)] }).toEqual({
        held: { event: false, raw: false },
        answer: [200, 'queued', { id: 'evt_not_held', type: 'ag.hid_org.created', status: 'queued' }],
      });
    },
  );

  // The enqueue's outcome goes straight to the dispatcher's settle and answer, with no .then of its
  // own between: if a later change lets that continuation throw, the event must not stay held, or
  // every later delivery of it would be a 409 for the life of the process.
  it('frees its event when the continuation of its enqueue breaks, so its redelivery is queued, not refused as in flight', async () => {
    const enqueued: string[] = [];
    const receiver = queuedCore(async (delivery) => void enqueued.push(delivery.id), false);
    const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt_broken_enqueue' }));
    const broken = jest.spyOn(enqueueModule, 'enqueueDelivery').mockImplementationOnce((...args) =>
      Promise.resolve().then(() =>
        // An outcome that throws when read: whatever reads it first breaks.
        args[7](
          Object.defineProperty({}, 'ok', {
            get() {
              throw new Error('a broken outcome');
            },
          }) as Outcome,
        ),
      ),
    );
    const first = await receiver.handle(coreRequest(body, TOKEN)).then(
      ({ answer }) => answer.status,
      () => 'rejected',
    );
    broken.mockRestore();
    const again = await receiver.handle(coreRequest(body, TOKEN));
    expect({ first, again: [again.answer.status, again.record.outcome], enqueued }).toEqual({
      first: 500,
      again: [200, 'queued'],
      enqueued: ['evt_broken_enqueue'],
    });
  });
});
