// Issue 28 fault 5 (review), on both engines: an ordered (newest-wins) handler that overruns its try
// keeps its entity's lease as well as its event's claim (both renewed), so a newer event of the
// entity is put back rather than run alongside it, and the older one never writes last.
import { MemoryStore, type JobRecord } from '../lib';
import { describeEachEngine } from './support/describe-each-engine';
import { eventually } from './support/inbox-engines';
import { overlapRouter, queuedPassUpdate } from './support/overlap-router';

let queues = 0;

describeEachEngine('an overrunning ordered handler, on $name', (_engine, server) => {
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of opened.reverse()) await o.close();
    opened.length = 0;
  });

  it('a newer event of the entity does not run its ordered handler while the older one still runs', async () => {
    const inbox = server().inbox(`ordering-overrun-${process.pid}-${++queues}`);
    opened.push(inbox);
    const { router, overlaps, finished, open } = overlapRouter('evt_old');
    const jobs: JobRecord[] = [];
    // The entity's renewals, counted as the store grants them: the test moves on by them, not by the clock.
    const store = new MemoryStore({ logger: false });
    const renewEntity = store.renewEntity.bind(store);
    let renewals = 0;
    store.renewEntity = async (...a) => {
      const renewed = await renewEntity(...a);
      if (renewed) renewals++;
      return renewed;
    };
    opened.push(
      await inbox.startWorker(router, {
        concurrency: 2,
        // Leases of 2 s, renewed up to timeoutMs + leaseMs (3 s) after the try started.
        timeoutMs: 1_000,
        idempotency: { store, leaseMs: 2_000 },
        logger: false,
        onJob: (record) => void jobs.push(record),
      }),
    );
    try {
      await inbox.enqueue(queuedPassUpdate('evt_old', '2025-01-01T00:00:01Z'));
      await eventually('the older try timed out', () => jobs.some((j) => j.eventId === 'evt_old'), 30_000);
      // Past the entity's first lease (2 s from the start), within its renewals (to about 4.7 s): the
      // fourth renewal (one each 666 ms) is the last before the bound, and holds the entity 2 s more.
      await eventually('four renewals of the entity', () => renewals >= 4, 30_000);
      await inbox.enqueue(queuedPassUpdate('evt_new', '2025-01-01T00:00:02Z'));
      await eventually('the newer event had a try', () => jobs.some((j) => j.eventId === 'evt_new'), 30_000);
      open();
      await eventually('the older handler returned', () => finished.includes('evt_old'), 30_000);
      expect({ overlaps, finished }).toEqual({ overlaps: [], finished: ['evt_old'] });
    } finally {
      open();
    }
  }, 60_000);
});
