// A try whose handler outlives the worker's timeout keeps the event: no second start while it runs.
import { createEventRouter, type IdempotencyStore, type Inbox, type JobRecord } from '../lib';
import { handledKey } from '../lib/inbox/worker/run-queued-event';
import { describeEachEngine } from './support/describe-each-engine';
import { eventually } from './support/inbox-engines';
import { queuedIssued as queued, sharedStore } from './support/queued-issued';

const TIMEOUT_MS = 1_000;
let queues = 0;

describeEachEngine('a handler that ignores ctx.signal past timeoutMs, on $name', (engine, server) => {
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of opened.reverse()) await o.close();
    opened.length = 0;
  });

  async function open(): Promise<{ inbox: Inbox; store: IdempotencyStore }> {
    const inbox = server().inbox(`overrun-${process.pid}-${++queues}`);
    opened.push(inbox);
    const shared = await sharedStore(engine, server(), `overrun_${process.pid}_${++queues}`);
    opened.push(shared);
    return { inbox, store: shared.store };
  }

  it('is started once, never twice at a time, aborted at the timeout, and ends completed, not dead', async () => {
    const { inbox, store } = await open();
    let running = 0;
    const starts: { most: number; abortedWhileRunning: boolean }[] = [];
    const router = createEventRouter().on('ag.access_pass.issued', async (_event, ctx) => {
      running++;
      const start = { most: running, abortedWhileRunning: false };
      starts.push(start);
      // Ignores the signal: runs 3 × timeoutMs whatever it says.
      await new Promise((resolve) => setTimeout(resolve, 3 * TIMEOUT_MS));
      start.abortedWhileRunning = ctx.signal.aborted;
      running--;
    });
    const jobs: JobRecord[] = [];
    const worker = await inbox.startWorker(router, {
      timeoutMs: TIMEOUT_MS,
      attempts: 3,
      // The next try comes after the lease (2 × timeoutMs) would have run out, while the first still runs.
      backoff: { delayMs: 1.5 * TIMEOUT_MS },
      idempotency: store,
      logger: false,
      onJob: (record) => void jobs.push(record),
    });
    opened.push(worker);
    await inbox.enqueue(queued('evt_overrun'));
    await eventually(
      'the job completed',
      () => jobs.some((j) => j.outcome === 'duplicate' || j.outcome === 'processed'),
      30_000,
    );
    expect(starts).toEqual([{ most: 1, abortedWhileRunning: true }]);
    // The first try timed out (one attempt spent); the others found it running, then done.
    expect(jobs[0]?.outcome).toBe('retry');
    expect(jobs.map((j) => j.outcome)).not.toContain('dead');
    expect(jobs.at(-1)?.outcome).toBe('duplicate');
    expect(await store.get(handledKey(queued('evt_overrun').key))).toBe('done');
    await eventually('the queue is empty', async () => {
      const status = await inbox.status();
      return status.waiting + status.active === 0;
    });
    expect(await inbox.status()).toMatchObject({ waiting: 0, active: 0, dead: 0 });
  }, 60_000);

  it('runs nothing for a job whose handlers already succeeded (a worker killed before the queue heard)', async () => {
    const { inbox, store } = await open();
    const delivery = queued('evt_ran_before');
    // What a killed worker leaves: the ledger says done, the queue still holds the job.
    expect(await store.claim(handledKey(delivery.key), 'killed-worker', 60_000)).toBe('claimed');
    expect(await store.markDone(handledKey(delivery.key), 'killed-worker', 60_000)).not.toBe(false);
    await inbox.enqueue(delivery);
    const ran: string[] = [];
    const jobs: JobRecord[] = [];
    const router = createEventRouter().onAny((event) => void ran.push(event.id));
    opened.push(
      await inbox.startWorker(router, {
        attempts: 2,
        backoff: { delayMs: 50 },
        idempotency: store,
        logger: false,
        onJob: (record) => void jobs.push(record),
      }),
    );
    await eventually('the job settled', () => jobs.length > 0, 30_000);
    expect(jobs.map((j) => j.outcome)).toEqual(['duplicate']);
    expect(ran).toEqual([]);
    await eventually('the queue is empty', async () => (await inbox.status()).waiting === 0);
    expect(await inbox.status()).toMatchObject({ active: 0, dead: 0 });
  }, 60_000);
});
