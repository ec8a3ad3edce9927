import express from 'express';
import { createEventRouter, EVENT_TYPES, webhookReceiver, type EventType } from '../lib';
import { buildEvent, DELIVERY_HEADERS, type DeliveryEnvelope } from '../lib/testing';
import { listen } from './support/listen';
import { seeded } from './support/seeded';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const TOKEN = 'tok_faults';
const EVENTS = 300;
const TIMEOUT_MS = 40;
const MAX_ATTEMPTS = 60;

describe('webhookReceiver under faults', () => {
  it('runs every event’s handlers successfully exactly once and never acknowledges before that', async () => {
    const seed = Number(process.env.FAULT_SEED ?? 20261122);
    const random = seeded(seed);
    const successes = new Map<string, number>();
    const handlerRuns = new Map<string, number>();
    const violations: string[] = [];
    const figures = {
      events: EVENTS,
      attempts: 0,
      acknowledgements: 0,
      duplicatesSuppressed: 0,
      conflicts: 0,
      failures: 0,
      timeouts: 0,
    };

    const router = createEventRouter().onAny(async (event) => {
      const run = (handlerRuns.get(event.id) ?? 0) + 1;
      handlerRuns.set(event.id, run);
      const roll = random();
      // Late attempts always succeed, so the run ends by itself.
      if (run < 6 && roll < 0.33) throw new Error('seeded failure');
      if (run < 6 && roll < 0.5) {
        await sleep(TIMEOUT_MS + 20 + random() * 40);
        if (random() < 0.5) throw new Error('seeded late failure');
      } else {
        await sleep(random() * 8);
      }
      successes.set(event.id, (successes.get(event.id) ?? 0) + 1);
    });
    const receiver = webhookReceiver({
      bearerTokens: [TOKEN],
      router,
      timeoutMs: TIMEOUT_MS,
      logger: false,
      retryAfterSeconds: 1,
    });
    const app = express();
    app.use('/hooks', receiver);
    const server = await listen(app);

    async function deliverUntilAcknowledged(event: DeliveryEnvelope): Promise<void> {
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        figures.attempts++;
        const res = await fetch(`${server.url}/hooks`, {
          method: 'POST',
          headers: { ...DELIVERY_HEADERS, Authorization: `Bearer ${TOKEN}` },
          body: JSON.stringify(event),
        });
        const body = (await res.json()) as { status?: string | number };
        if (res.status === 200 || res.status === 201) {
          figures.acknowledgements++;
          if (body.status === 'duplicate') figures.duplicatesSuppressed++;
          if (successes.get(event.id) !== 1)
            violations.push(`${event.id} acknowledged with ${successes.get(event.id) ?? 0} successes`);
          return;
        }
        if (res.status === 409) figures.conflicts++;
        if (res.status === 500) figures.failures++;
        if (res.status === 503) figures.timeouts++;
        await sleep(5 + random() * 25);
      }
      violations.push(`${event.id} never acknowledged after ${MAX_ATTEMPTS} attempts`);
    }

    try {
      const events = Array.from({ length: EVENTS }, (_, i) =>
        buildEvent(EVENT_TYPES[i % EVENT_TYPES.length] as EventType, {}, { layout: i % 2 === 0 ? 'A' : 'B' }),
      );
      const queue = [...events];
      const worker = async () => {
        for (let event = queue.shift(); event; event = queue.shift()) {
          // About a quarter of the events are delivered twice at once, as a retrying Service may.
          const copies = random() < 0.25 ? 2 : 1;
          await Promise.all(Array.from({ length: copies }, () => deliverUntilAcknowledged(event)));
        }
      };
      await Promise.all(Array.from({ length: 24 }, worker));
      await receiver.drain();

      console.log(`fault test (seed ${seed}): ${JSON.stringify(figures)}`);
      expect(violations).toEqual([]);
      for (const event of events) expect([event.id, successes.get(event.id)]).toEqual([event.id, 1]);
      expect(figures.acknowledgements).toBeGreaterThanOrEqual(EVENTS);
      expect(figures.failures).toBeGreaterThan(0);
      expect(figures.timeouts).toBeGreaterThan(0);
      expect(figures.duplicatesSuppressed).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  }, 120_000);
});
