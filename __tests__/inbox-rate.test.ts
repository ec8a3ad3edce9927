import { createEventRouter, type Inbox, type WorkerRate } from '../lib';
import { describeEachEngine } from './support/describe-each-engine';
import { enqueueEvent } from './support/enqueue-event';
import { eventually } from './support/inbox-engines';

const EVENTS = 100;
const RATE: WorkerRate = { max: 20, perMs: 1000 };
/**
 * What the start times measured in the handler may lose against the engine's own clock: the time
 * between a job's fetch and its handler's call, which varies with the event loop (142 ms seen at a
 * load average of 20 on 2 cores). A quarter of a window: without the limit, 41 starts take 50-200 ms.
 */
const SLACK_MS = 250;

/**
 * The pairs of starts closer than the bound allows, with one window of give (BullMQ counts in fixed
 * windows): among any `(k + 1) × max + 1` starts, the first and last lie at least `k` windows apart.
 */
function tooClose(starts: number[], { max, perMs }: WorkerRate): string[] {
  const sorted = [...starts].sort((a, b) => a - b);
  const found: string[] = [];
  for (let k = 1; (k + 1) * max < sorted.length; k++)
    for (let i = 0; i + (k + 1) * max < sorted.length; i++) {
      const span = (sorted[i + (k + 1) * max] as number) - (sorted[i] as number);
      if (span < k * perMs - SLACK_MS) found.push(`${(k + 1) * max + 1} starts in ${span} ms`);
    }
  return found;
}

let queues = 0;

describeEachEngine('the workers’ rate on $name', (engine, server) => {
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of opened.reverse()) await o.close();
    opened.length = 0;
  });

  // BullMQ's limiter bounds the queue's workers together: two of them, on two connections, share it.
  // pg-boss's bound is per worker (docs/inbox.md), so one worker is measured.
  const workers = engine.name === 'bullmq' ? 2 : 1;

  it(`resumed with ${EVENTS} events held, ${workers} worker(s) start at most ${RATE.max} tries a ${RATE.perMs} ms; each event runs once`, async () => {
    const name = `rate-${process.pid}-${++queues}`;
    const inboxes = Array.from({ length: workers }, () => server().inbox(name));
    opened.push(...inboxes);
    const [first] = inboxes as [Inbox];
    await first.pause();
    await Promise.all(Array.from({ length: EVENTS }, (_, i) => enqueueEvent(first, `evt_rate_${i}`)));
    const starts: number[] = [];
    const runs = new Map<string, number>();
    const router = createEventRouter().onAny((event) => {
      starts.push(Date.now());
      runs.set(event.id, (runs.get(event.id) ?? 0) + 1);
    });
    for (const inbox of inboxes)
      opened.push(await inbox.startWorker(router, { concurrency: 10, rate: RATE, logger: false }));
    await first.resume();

    await eventually('every event runs', () => runs.size === EVENTS, 120_000);
    expect(tooClose(starts, RATE)).toEqual([]);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect(starts).toHaveLength(EVENTS);
  }, 180_000);
});
