import { createEventRouter, MemoryStore, type IdempotencyStore } from '../lib';
import { buildEvent } from '../lib/testing';
import { doorReceiver, tokenDelivery } from './support/door-receiver';
import { DOORS } from './support/doors';

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
