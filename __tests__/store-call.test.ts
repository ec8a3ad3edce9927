import { createEventRouter, MemoryStore, type IdempotencyStore } from '../lib';
import { buildEvent } from '../lib/testing';
import { doorReceiver, tokenDelivery } from './support/door-receiver';
import { DOORS } from './support/doors';
import { gate } from './support/gate';

const TOKEN = 'tok_store_call';

describe.each(DOORS)('store calls bounded by idempotency.timeoutMs through $name', (door) => {
  const start = doorReceiver(door, TOKEN);

  it('acknowledges once handlers succeed although markDone hangs, and drain() still returns', async () => {
    const store: IdempotencyStore = {
      claim: async () => 'claimed',
      markDone: () => new Promise(() => undefined),
      release: async () => undefined,
      get: async () => null,
    };
    const router = createEventRouter().on('ag.hid_org.created', () => undefined);
    // markDone is retried in the background within half the lease (here 500 ms), then given up on.
    const { d } = await start({
      router,
      idempotency: { store, timeoutMs: 100, leaseMs: 1000 },
      timeoutMs: 500,
    });
    expect((await d.send(tokenDelivery(TOKEN, buildEvent('ag.hid_org.created')))).status).toBe(200);
    await expect(d.drain({ timeoutMs: 2000 })).resolves.toMatchObject({ drained: true, running: [] });
  });

  it.each([
    ['does not say it answers at once: its slow claim is cut off at idempotency.timeoutMs', undefined, 503],
    ['says it answers at once: no timer is set around its calls, so the slow claim is awaited', true, 200],
  ])('a store that %s', async (_name, answersAtOnce, status) => {
    const memory = new MemoryStore();
    // Cut off, the claim lands only after the answer (or, were it awaited, 5 s on: a 200 then, not a
    // hang); awaited, it lands 150 ms in, three timeouts' worth.
    const lands = gate<void>('the test let the claim land', 10_000);
    const late = setTimeout(() => lands.open(), answersAtOnce === undefined ? 5_000 : 150);
    const store: IdempotencyStore = {
      ...(answersAtOnce === undefined ? {} : { answersAtOnce }),
      claim: async (key, token, lease) => {
        await lands.opened;
        return memory.claim(key, token, lease);
      },
      markDone: (key, token, retention) => memory.markDone(key, token, retention),
      release: (key, token) => memory.release(key, token),
      get: (key) => memory.get(key),
    };
    const router = createEventRouter().on('ag.hid_org.created', () => undefined);
    const { d } = await start({ router, idempotency: { store, timeoutMs: 50 } });
    expect((await d.send(tokenDelivery(TOKEN, buildEvent('ag.hid_org.created')))).status).toBe(status);
    clearTimeout(late);
    lands.open();
    memory.close();
  });

  it('gives back a claim that lands after its 503, so the next delivery need not wait out the lease', async () => {
    const memory = new MemoryStore();
    // The first claim lands only when the test says, after its 503; the give-back is then a release.
    const lands = gate<void>('the test let the first claim land');
    const givenBack = gate('the late claim was given back');
    let slow = true;
    const store: IdempotencyStore = {
      claim: async (key, token, lease) => {
        if (slow) {
          slow = false;
          await lands.opened;
        }
        return memory.claim(key, token, lease);
      },
      markDone: (key, token, retention) => memory.markDone(key, token, retention),
      release: async (key, token) => {
        await memory.release(key, token);
        givenBack.open();
      },
      get: (key) => memory.get(key),
    };
    let runs = 0;
    const router = createEventRouter().on('ag.hid_org.created', () => void runs++);
    const { d } = await start({ router, idempotency: { store, timeoutMs: 50, leaseMs: 60_000 } });
    const event = buildEvent('ag.hid_org.created');
    expect((await d.send(tokenDelivery(TOKEN, event))).status).toBe(503);
    lands.open();
    await givenBack.opened;
    const again = await d.send(tokenDelivery(TOKEN, event));
    expect([again.status, JSON.parse(again.text).status, runs]).toEqual([200, 'processed', 1]);
    memory.close();
  });
});
