import { createEventRouter, MemoryStore, type IdempotencyStore } from '../lib';
import { buildEvent, DELIVERY_HEADERS } from '../lib/testing';
import { postHead, rawSocket, wireServer } from './support/wire-server';

const TOKEN = 'tok_drain';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// drain() counts a request from the moment it enters, mid-body or waiting on the store.
describe('drain() over node:http', () => {
  it('drain() waits for a delivery whose body is still arriving', async () => {
    const ran: string[] = [];
    const router = createEventRouter().onAny((event) => void ran.push(event.id));
    const s = await wireServer(TOKEN, { router });
    const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt_arriving' }));
    const client = rawSocket(s.port);
    try {
      client.write(postHead(TOKEN, '/', Buffer.byteLength(body)) + body.slice(0, 50));
      await sleep(50);
      let drained = false;
      const drain = s.handler.drain().then((result) => ((drained = true), result));
      await sleep(150);
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
    const store: IdempotencyStore = {
      claim: async (key, token, lease) => (await sleep(200), memory.claim(key, token, lease)),
      markDone: (key, token, retention) => memory.markDone(key, token, retention),
      release: (key, token) => memory.release(key, token),
      get: (key) => memory.get(key),
    };
    const router = createEventRouter().onAny(async (event) => (await sleep(50), void ran.push(event.id)));
    const s = await wireServer(TOKEN, { router, idempotency: store });
    try {
      const waiting = fetch(`http://127.0.0.1:${s.port}/`, {
        method: 'POST',
        headers: { ...DELIVERY_HEADERS, authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt_claiming' })),
      });
      await sleep(80);
      const result = await s.handler.drain();
      expect(ran).toEqual(['evt_claiming']);
      expect(result).toMatchObject({ drained: true, requests: 0, running: [] });
      expect((await waiting).status).toBe(200);
    } finally {
      s.close();
      memory.close();
    }
  });
});
