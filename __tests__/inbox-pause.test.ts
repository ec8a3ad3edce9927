import { Registry } from 'prom-client';
import { createEventRouter, type Inbox } from '../lib';
import { inboxMetrics } from '../lib/metrics';
import { PAUSE_READ_MS } from '../lib/pg-boss/pause-flag';
import { sleep } from './support/contract-rows';
import { describeEachEngine } from './support/describe-each-engine';
import { eventually } from './support/inbox-engines';
import { queueHeld } from './support/queue-held';

const EVENTS = 200;
/** How long the paused queue is watched for a try that should not start (the 5 s). */
const WATCH_MS = 5_000;
/**
 * A pause reaches a worker of another process within one read of the flag (pg-boss) and a fetch in
 * flight: the documented "within a second or two". BullMQ's pause is read by its fetch script itself.
 */
const PAUSE_REACHES_MS = 2 * PAUSE_READ_MS;

let queues = 0;

describeEachEngine('pausing the inbox on $name', (engine, server) => {
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of opened.reverse()) await o.close();
    opened.length = 0;
  });

  /** An inbox on queue `name` with its own connection, as another process would have. */
  function inboxOn(name: string): Inbox {
    const inbox = server().inbox(name);
    opened.push(inbox);
    return inbox;
  }
  /** Starts a worker that counts the tries of each event, into `runs`. */
  async function worker(inbox: Inbox, runs: Map<string, number>) {
    const router = createEventRouter().onAny((event) => {
      runs.set(event.id, (runs.get(event.id) ?? 0) + 1);
    });
    const w = await inbox.startWorker(router, { concurrency: 4, logger: false });
    opened.push(w);
    return w;
  }
  const tries = (runs: Map<string, number>) => [...runs.values()].reduce((a, b) => a + b, 0);
  async function expectEachRunOnce(runs: Map<string, number>, ids: string[], inbox: Inbox) {
    await eventually('every held event runs', () => runs.size === EVENTS, 60_000);
    await eventually('the queue empties', async () => {
      const s = await inbox.status();
      return s.waiting + s.delayed + s.active === 0;
    });
    expect([...runs.keys()].sort()).toEqual([...ids].sort());
    expect(tries(runs)).toBe(EVENTS);
  }

  it('holds 200 events queued (200 queued) while no worker of two inboxes starts a try; resumed, each runs once', async () => {
    const name = `pause-${process.pid}-${++queues}`;
    const here = inboxOn(name);
    const there = inboxOn(name);
    const runs = new Map<string, number>();
    await worker(here, runs);
    await worker(there, runs);
    const registry = new Registry();
    inboxMetrics({ inbox: here, registry });
    const gauge = `service_webhooks_inbox_paused{queue="${name}",engine="${engine.name}"}`;
    expect(await registry.metrics()).toContain(`${gauge} 0`);

    await here.pause();
    await here.pause(); // idempotent
    expect([(await here.status()).paused, (await there.status()).paused]).toEqual([true, true]);
    await sleep(PAUSE_REACHES_MS);
    const ids = await queueHeld(here, EVENTS, 'held', opened);
    await sleep(WATCH_MS);
    expect(tries(runs)).toBe(0);
    const held = await there.status();
    expect([held.paused, held.waiting + held.delayed, held.active]).toEqual([true, EVENTS, 0]);
    await eventually('the gauge says paused', async () => (await registry.metrics()).includes(`${gauge} 1`));

    // Resumed from the other inbox: the pause is the queue's, not one connection's.
    await there.resume();
    await there.resume();
    await expectEachRunOnce(runs, ids, here);
    expect((await here.status()).paused).toBe(false);
    await eventually('the gauge says running', async () => (await registry.metrics()).includes(`${gauge} 0`));
  }, 120_000);

  it('stays paused across a worker restart and an engine restart, and the events held run once after', async () => {
    const name = `pause-restart-${process.pid}-${++queues}`;
    const runs = new Map<string, number>();
    const first = inboxOn(name);
    const w = await worker(first, runs);
    await first.pause();
    const ids = await queueHeld(first, EVENTS, 'restart', opened);
    // The worker restarts: the new one reads the pause from the engine.
    await w.close();
    await worker(first, runs);
    await sleep(PAUSE_REACHES_MS);
    expect(tries(runs)).toBe(0);
    for (const o of opened.splice(0).reverse()) await o.close();

    await server().restart();
    const after = inboxOn(name);
    expect((await after.status()).paused).toBe(true);
    await worker(after, runs);
    await worker(inboxOn(name), runs);
    await sleep(WATCH_MS);
    expect(tries(runs)).toBe(0);
    expect((await after.status()).waiting).toBe(EVENTS);

    await after.resume();
    await expectEachRunOnce(runs, ids, after);
  }, 180_000);
});
