import express from 'express';
import { createEmulator, type Emulator } from '../lib/emulator';
import { listen } from './support/listen';

/** An endpoint that verifies, then holds each delivery `holdMs` while counting how many are in flight. */
async function countingEndpoint(holdMs: number) {
  const stats = { inFlight: 0, most: 0, received: 0 };
  const app = express();
  app.use(express.json({ type: () => true }));
  app.post('/hook', (req, res) => {
    const body = req.body as { challenge?: string };
    if (body.challenge) return void res.json({ challenge: body.challenge });
    stats.received++;
    stats.most = Math.max(stats.most, ++stats.inFlight);
    setTimeout(() => {
      stats.inFlight--;
      res.sendStatus(200);
    }, holdMs);
  });
  const server = await listen(app);
  return { stats, url: `${server.url}/hook`, close: server.close };
}
describe('the emulator bounds the deliveries in flight', () => {
  let emulator: Emulator;
  afterEach(() => emulator?.close());

  it.each([
    [3, 3],
    [undefined, 8],
  ])('keeps at most maxConcurrentDeliveries=%p (so %p) attempts in flight', async (max, bound) => {
    emulator = await createEmulator(max === undefined ? {} : { maxConcurrentDeliveries: max });
    const endpoint = await countingEndpoint(40);
    try {
      await emulator.registerWebhook({
        name: 'c',
        url: endpoint.url,
        subscribedEvents: ['ag.hid_org.created'],
      });
      for (let i = 0; i < 30; i++) emulator.emit('ag.hid_org.created');
      await emulator.waitForIdle({ timeoutMs: 10_000 });
      expect(endpoint.stats.received).toBe(30);
      expect(emulator.deliveries.every((d) => d.state === 'acknowledged')).toBe(true);
      expect(endpoint.stats.most).toBe(bound);
    } finally {
      await endpoint.close();
    }
  });
});
