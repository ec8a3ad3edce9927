import { createEventRouter, MemoryStore, type IdempotencyStore } from '../lib';
import { buildEvent, DELIVERY_HEADERS } from '../lib/testing';
import { gate } from './support/gate';
import { postHead, rawSocket, wireServer } from './support/wire-server';

const TOKEN = 'tok_drain';
/** One turn of the event loop: what drain() would need to settle if nothing held it. */
const turn = () => new Promise((resolve) => setImmediate(resolve));
/** An onDelivery that opens `entered` as a request enters the receiver (drain counts it from then). */
const entering = (entered: { open(): void }) =>
  Object.assign(() => undefined, { onRequestStart: () => entered.open() });

// drain() counts a request from the moment it enters, mid-body or waiting on the store.
describe('drain() over node:http', () => {
  it('drain() waits for a delivery whose body is still arriving', async () => {
    const ran: string[] = [];
    const router = createEventRouter().onAny((event) => void ran.push(event.id));
    const entered = gate('the delivery entered the receiver');
    const s = await wireServer(TOKEN, { router, onDelivery: entering(entered) });
    const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt_arriving' }));
    const client = rawSocket(s.port);
    try {
      client.write(postHead(TOKEN, '/', Buffer.byteLength(body)) + body.slice(0, 50));
      await entered.opened;
      let drained = false;
      const drain = s.handler.drain().then((result) => ((drained = true), result));
      // The rest of the body is still with the test: nothing can have let drain() finish.
      await turn();
      expect(drained).toBe(false);
      client.write(body.slice(50));
      await expect(drain).resolves.toMatchObject({ drained: true, requests: 0, running: [] });
      expect(ran).toEqual(['evt_arriving']);
    } finally {
      client.close();
      s.close();
    }
  });

  it('drain() waits for a delivery waiting on the store, and its handlers', async () => {
    const ran: string[] = [];
    const memory = new MemoryStore();
    const claiming = gate('the claim reached the store');
    const claimLands = gate<void>('the test let the claim land');
    const handling = gate('the handler started');
    const handled = gate<void>('the test let the handler finish');
    const store: IdempotencyStore = {
      claim: async (key, token, lease) => {
        claiming.open();
        await claimLands.opened;
        return memory.claim(key, token, lease);
      },
      markDone: (key, token, retention) => memory.markDone(key, token, retention),
      release: (key, token) => memory.release(key, token),
      get: (key) => memory.get(key),
    };
    const router = createEventRouter().onAny(async (event) => {
      handling.open();
      await handled.opened;
      ran.push(event.id);
    });
    const s = await wireServer(TOKEN, { router, idempotency: { store, timeoutMs: 5000 } });
    try {
      const waiting = fetch(`http://127.0.0.1:${s.port}/`, {
        method: 'POST',
        headers: { ...DELIVERY_HEADERS, authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt_claiming' })),
      });
      await claiming.opened;
      let drained = false;
      const draining = s.handler.drain().then((result) => ((drained = true), result));
      await turn();
      expect(drained).toBe(false);
      claimLands.open();
      await handling.opened;
      await turn();
      expect(drained).toBe(false);
      handled.open();
      const result = await draining;
      expect(ran).toEqual(['evt_claiming']);
      expect(result).toMatchObject({ drained: true, requests: 0, running: [] });
      expect((await waiting).status).toBe(200);
    } finally {
      s.close();
      memory.close();
    }
  });
});
