import { Registry } from 'prom-client';
import { createEventRouter, OptionsError, type Inbox } from '../lib';
import { bullmqInbox } from '../lib/bullmq';
import { DEPTH_READ_MS } from '../lib/inbox/inbox-full';
import { prometheusMetrics } from '../lib/metrics';
import { pgBossInbox } from '../lib/pg-boss';
import { delivery, issued, sleep, TOKEN } from './support/contract-rows';
import { describeEachEngine } from './support/describe-each-engine';
import { fetchDoor } from './support/doors';
import { eventually } from './support/inbox-engines';

const MAX_DEPTH = 5;
/** Sends are bounded: the queue fills within a read of its depth or two. */
const MOST_SENDS = 1000;

let queues = 0;

describeEachEngine('the inbox maxDepth on $name', (engine, server) => {
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of opened.reverse()) await o.close();
    opened.length = 0;
  });
  function inbox(name: string, maxDepth?: number): Inbox {
    const depth = maxDepth === undefined ? {} : { maxDepth };
    const made =
      engine.name === 'bullmq'
        ? bullmqInbox({ connection: server().url, name, logger: false, ...depth })
        : pgBossInbox({ connectionString: server().url, name, logger: false, ...depth });
    opened.push(made);
    return made;
  }

  it('with no worker, answers 503 + Retry-After (unqueued) past maxDepth; every event queued runs once, and the shed ones after the retries', async () => {
    const name = `depth-${process.pid}-${++queues}`;
    const full = inbox(name, MAX_DEPTH);
    const registry = new Registry();
    const door = await fetchDoor.open({
      bearerTokens: [TOKEN],
      router: createEventRouter(),
      logger: false,
      inbox: full,
      onDelivery: prometheusMetrics({ registry }),
    });
    opened.push(door);
    const queued: string[] = [];
    const shed: string[] = [];
    for (let i = 0; i < MOST_SENDS && shed.length < 3; i++) {
      const id = `evt_depth_${i}`;
      const answer = await door.send(delivery(issued({}, id)));
      if (answer.status === 200) {
        expect(JSON.parse(answer.text)).toMatchObject({ status: 'queued' });
        queued.push(id);
      } else {
        expect(answer.status).toBe(503);
        expect(answer.headers['retry-after']).toMatch(/^\d+$/);
        expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(JSON.parse(answer.text).type).toMatch(/shed-queue-depth$/);
        shed.push(id);
      }
      // Paced so the depth is read again while the sends go on.
      if (queued.length > MAX_DEPTH) await sleep(DEPTH_READ_MS / 4);
    }
    expect(shed).toHaveLength(3);
    expect(queued.length).toBeGreaterThan(MAX_DEPTH);
    // What was answered queued is held, and nothing shed was queued.
    const held = await full.status();
    expect(held.waiting + held.delayed).toBe(queued.length);
    expect(await registry.metrics()).toContain(`service_webhooks_shed_total{reason="queue-depth"} 3`);

    const runs = new Map<string, number>();
    opened.push(
      await inbox(name).startWorker(
        createEventRouter().onAny((event) => void runs.set(event.id, (runs.get(event.id) ?? 0) + 1)),
        { concurrency: 4, logger: false },
      ),
    );
    await eventually('the queued events run', () => runs.size === queued.length, 60_000);
    // The Service's retries of the shed ones: queued once the depth read finds room.
    for (const id of shed)
      await eventually(`${id} is queued on a retry`, async () => {
        return (await door.send(delivery(issued({}, id)))).status === 200;
      });
    await eventually('every event runs', () => runs.size === queued.length + shed.length, 60_000);
    expect([...runs.keys()].sort()).toEqual([...queued, ...shed].sort());
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
  }, 120_000);

  it.each([0, -1, 2.5, '10', null])('refuses maxDepth %p at construction', (value) => {
    expect(() => inbox(`depth-bad-${++queues}`, value as number)).toThrow(OptionsError);
    expect(() => inbox(`depth-bad-${++queues}`, value as number)).toThrow(
      /maxDepth must be a whole number ≥ 1, the events the queue may hold/,
    );
  });
});
