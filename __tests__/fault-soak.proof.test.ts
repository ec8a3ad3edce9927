import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createEventRouter,
  createNodeHandler,
  EVENT_TYPES,
  MemoryStore,
  type EventType,
  type IdempotencyStore,
  type Logger,
} from '../lib';
import { buildEvent, DELIVERY_HEADERS, type DeliveryEnvelope } from '../lib/testing';
import { seeded } from './support/seeded';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const TOKEN = 'tok_soak';
const EVENTS = 240;
const TIMEOUT_MS = 40;
const STORE_TIMEOUT_MS = 60;
const LEASE_MS = 400;
const MAX_ATTEMPTS = 60;

/** A store over a MemoryStore whose calls sometimes answer only long after the receiver stopped waiting. */
function slowStore(
  memory: MemoryStore,
  random: () => number,
  figures: { storeHangs: number },
): IdempotencyStore {
  const maybeLate = async <T>(call: () => Promise<T>): Promise<T> => {
    if (random() < 0.05) {
      figures.storeHangs++;
      await sleep(STORE_TIMEOUT_MS * 3);
    }
    return call();
  };
  return {
    claim: (key, token, lease) => maybeLate(() => memory.claim(key, token, lease)),
    markDone: (key, token, retention) => maybeLate(() => memory.markDone(key, token, retention)),
    release: (key, token) => maybeLate(() => memory.release(key, token)),
    get: (key) => memory.get(key),
  };
}

/** A logger that throws or rejects at random: it must never change an answer. */
function flakyLogger(random: () => number): Logger {
  const call = () => {
    const roll = random();
    if (roll < 0.3) throw new Error('log sink down');
    if (roll < 0.5) return Promise.reject(new Error('log sink down'));
    return undefined;
  };
  return { debug: call, info: call, warn: call, error: call };
}

describe('the receiver under a flaky logger, a slow store and hung handlers', () => {
  it('runs every event’s handlers successfully exactly once, never acknowledging before that', async () => {
    const seed = Number(process.env.FAULT_SEED ?? 20261122);
    const random = seeded(seed);
    const successes = new Map<string, number>();
    const runs = new Map<string, number>();
    const hung = new Set<string>();
    const violations: string[] = [];
    const escaped: unknown[] = [];
    const onEscape = (error: unknown) => void escaped.push(error);
    process.on('unhandledRejection', onEscape);
    const figures = {
      events: EVENTS,
      attempts: 0,
      acks: 0,
      duplicates: 0,
      conflicts: 0,
      failures: 0,
      unavailable: 0,
      storeHangs: 0,
      hungHandlers: 0,
      afterRestart: 0,
    };

    const router = createEventRouter().onAny(async (event) => {
      const run = (runs.get(event.id) ?? 0) + 1;
      runs.set(event.id, run);
      const roll = random();
      // A few first runs never settle: that process can never finish the event, a restart must.
      if (run === 1 && roll < 0.03) {
        hung.add(event.id);
        figures.hungHandlers++;
        return new Promise(() => undefined);
      }
      if (run < 6 && roll < 0.3) throw new Error('seeded failure');
      if (run < 6 && roll < 0.45) await sleep(TIMEOUT_MS + 20 + random() * 40);
      else await sleep(random() * 8);
      successes.set(event.id, (successes.get(event.id) ?? 0) + 1);
      return undefined;
    });
    const memory = new MemoryStore({ logger: false });
    const options = {
      bearerTokens: [TOKEN],
      router,
      timeoutMs: TIMEOUT_MS,
      retryAfterSeconds: 1,
      idempotency: {
        store: slowStore(memory, random, figures),
        leaseMs: LEASE_MS,
        timeoutMs: STORE_TIMEOUT_MS,
      },
      logger: flakyLogger(random),
    };

    async function serve() {
      const handler = createNodeHandler(options);
      const server = http.createServer((req, res) => void handler(req, res));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return {
        handler,
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
        close: () => (server.closeAllConnections(), server.close()),
      };
    }

    async function deliverUntilAcknowledged(
      url: string,
      event: DeliveryEnvelope,
      attempts: number,
    ): Promise<boolean> {
      for (let attempt = 1; attempt <= attempts; attempt++) {
        figures.attempts++;
        const res = await fetch(url, {
          method: 'POST',
          headers: { ...DELIVERY_HEADERS, Authorization: `Bearer ${TOKEN}` },
          body: JSON.stringify(event),
        });
        const body = (await res.json()) as { status?: string | number };
        if (res.status === 200 || res.status === 201) {
          figures.acks++;
          if (body.status === 'duplicate') figures.duplicates++;
          if (successes.get(event.id) !== 1)
            violations.push(`${event.id} acknowledged with ${successes.get(event.id) ?? 0} successes`);
          return true;
        }
        if (res.status === 409) figures.conflicts++;
        else if (res.status === 500) figures.failures++;
        else if (res.status === 503) figures.unavailable++;
        else violations.push(`${event.id}: unexpected ${res.status}`);
        await sleep(5 + random() * 25);
      }
      return false;
    }

    const first = await serve();
    const events = Array.from({ length: EVENTS }, (_, i) =>
      buildEvent(EVENT_TYPES[i % EVENT_TYPES.length] as EventType, {}, { layout: i % 2 === 0 ? 'A' : 'B' }),
    );
    const unacknowledged = new Set<DeliveryEnvelope>();
    try {
      const queue = [...events];
      const worker = async () => {
        for (let event = queue.shift(); event; event = queue.shift()) {
          const copies = random() < 0.25 ? 2 : 1;
          const acked = await Promise.all(
            Array.from({ length: copies }, () => deliverUntilAcknowledged(first.url, event, MAX_ATTEMPTS)),
          );
          if (!acked.some(Boolean)) unacknowledged.add(event);
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
      // Only events whose handler hung may be left, and none of them was acknowledged or succeeded.
      expect([...unacknowledged].map((e) => e.id).sort()).toEqual([...hung].sort());
      for (const id of hung) expect(successes.get(id)).toBeUndefined();
      const drained = await first.handler.drain({ timeoutMs: 200 });
      expect(drained.drained).toBe(false);
      expect(drained.running.sort()).toEqual([...hung].sort());
    } finally {
      first.close();
    }

    // A restart: a new receiver on the same store finishes what the hung process never could.
    await sleep(LEASE_MS + 50);
    const second = await serve();
    try {
      for (const event of unacknowledged) {
        if (await deliverUntilAcknowledged(second.url, event, MAX_ATTEMPTS)) figures.afterRestart++;
      }
      await second.handler.drain({ timeoutMs: 5000 });
    } finally {
      second.close();
      memory.close();
      process.off('unhandledRejection', onEscape);
    }

    console.log(`fault soak (seed ${seed}): ${JSON.stringify(figures)}`);
    expect(violations).toEqual([]);
    expect(escaped).toEqual([]);
    for (const event of events) expect([event.id, successes.get(event.id)]).toEqual([event.id, 1]);
    expect(figures.afterRestart).toBe(hung.size);
    expect(figures.hungHandlers).toBeGreaterThan(0);
    expect(figures.storeHangs).toBeGreaterThan(0);
    expect(figures.failures).toBeGreaterThan(0);
    expect(figures.duplicates).toBeGreaterThan(0);
  }, 120_000);
});
