import { createEventRouter } from '../lib';
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
