// The pg-boss worker's settles: each fenced to its try, its steps in one transaction.
import { createEventRouter, MemoryStore, type JobRecord } from '../lib';
import { handledKey } from '../lib/inbox/worker/run-queued-event';
import { normalizeEvent } from '../lib/events/normalize-event';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { jobIdFor, queuedDelivery, type QueuedDelivery } from '../lib/inbox/queued-delivery';
import { pgBossInbox } from '../lib/pg-boss';
import { loadPgBoss, type PgBoss } from '../lib/pg-boss/load-pg-boss';
import { PAUSE_READ_MS, PAUSED_SUFFIX } from '../lib/pg-boss/pause-flag';
import { buildEvent } from '../lib/testing';
import { gate } from './support/gate';
import { eventually } from './support/inbox-engines';
import { describeWithPostgres, startPostgresServer, type PostgresServer } from './support/postgres-server';

function queued(id: string): QueuedDelivery {
  const envelope = buildEvent('ag.access_pass.issued', {}, { id });
  const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
  return queuedDelivery(idempotencyKey('', event.source, id), event, () => undefined, null);
}

/** `boss`, with `intercept(property, call)` answering the calls it names (null: the boss's own). */
function intercepted(
  boss: PgBoss,
  intercept: (
    property: string | symbol,
    call: (...a: unknown[]) => Promise<unknown>,
  ) => ((...a: unknown[]) => Promise<unknown>) | null,
): PgBoss {
  return new Proxy(boss, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const call = (value as (...a: unknown[]) => Promise<unknown>).bind(target);
      return intercept(property, call) ?? call;
    },
  }) as PgBoss;
}

describeWithPostgres('the pg-boss worker settles a try in one fenced transaction', () => {
  let server: PostgresServer;
  const opened: { close(): Promise<void> }[] = [];
  let boss: PgBoss;
  beforeAll(async () => {
    server = await startPostgresServer();
    boss = new (loadPgBoss().PgBoss)({ connectionString: server.url });
    boss.on('error', () => undefined);
    await boss.start();
  }, 60_000);
  afterAll(async () => {
    for (const o of opened.reverse()) await o.close().catch(() => undefined);
    await boss?.stop({ graceful: false, timeout: 5000 });
    await server?.close();
  });

  it('a busy put-back another worker could take half-done still counts no attempt (attempts: 2, one failure -> run again, not dead)', async () => {
    const name = `put-back-${process.pid}`;
    const delivery = queued('evt-put-back');
    const store = new MemoryStore({ logger: false });
    // Another try holds the event (a timed-out try whose handler still runs, renewing its claim).
    expect(await store.claim(handledKey(delivery.key), 'another-try', 60_000)).toBe('claimed');

    // The first put-back's last step is slow (a GC pause, a slow link). If the job can be fetched
    // by then (its failure is visible), the other loop takes it and puts it back meanwhile.
    const secondDone = gate('the second put-back updated the job', 20_000);
    let updates = 0;
    const gated = intercepted(boss, (property, call) => {
      if (property !== 'update') return null;
      return async (...args: unknown[]) => {
        if (args[0] !== name) return call(...args);
        const n = ++updates;
        if (n === 1) {
          const [seen] = await boss.findJobs(name, { id: jobIdFor(delivery.key) });
          if (seen?.state !== 'active') await secondDone.opened;
        }
        const result = await call(...args);
        if (n === 2) secondDone.open();
        return result;
      };
    });
    const inbox = pgBossInbox({ boss: gated, name, logger: false });
    opened.push(inbox);

    let runs = 0;
    const records: JobRecord[] = [];
    const router = createEventRouter().onAny(() => {
      if (++runs === 1) throw new Error('the CRM is down, once');
    });
    opened.push(
      await inbox.startWorker(router, {
        concurrency: 2,
        attempts: 2,
        backoff: { delayMs: 10 },
        timeoutMs: 100,
        idempotency: { store, leaseMs: 1000 },
        logger: false,
        onJob: (r) => void records.push(r),
      }),
    );
    await inbox.enqueue(delivery);
    await secondDone.opened;
    // The holder is done: the next try claims the event and runs the handler.
    await store.release(handledKey(delivery.key), 'another-try');
    await eventually(
      'the event settled (completed or dead)',
      async () => {
        const s = await inbox.status();
        return s.dead === 1 || records.some((r) => r.outcome === 'unhandled');
      },
      30_000,
    );
    // The busy tries were put back, and the handler's first failure was attempt 1 of 2.
    expect({ dead: (await inbox.status()).dead, runs }).toEqual({ dead: 0, runs: 2 });
    // (onAny handlers complete the job as 'unhandled'.)
    expect(records.filter((r) => r.outcome !== 'retry').map((r) => `${r.attempt}:${r.outcome}`)).toEqual([
      '2:unhandled',
    ]);
    expect(records.filter((r) => r.outcome === 'retry').every((r) => r.attempt === 1)).toBe(true);
  }, 60_000);

  it('a last try whose claim lapsed writes no dead letter for the job another worker now runs', async () => {
    const name = `dead-fence-${process.pid}`;
    const delivery = queued('evt-dead-fence');
    const id = jobIdFor(delivery.key);
    // The try's first write to pg-boss (whichever it is) waits until another worker has the job.
    const reached = gate('the try settling the job', 20_000);
    const release = gate('another try has the job', 20_000);
    const returned = gate('the held call returned', 20_000);
    let held = false;
    const gated = intercepted(boss, (property, call) => {
      if (property !== 'send' && property !== 'cancel') return null;
      return async (...args: unknown[]) => {
        // The receiver's sends are not the try's.
        if ((property === 'send' && args[0] === name) || held) return call(...args);
        held = true;
        reached.open();
        await release.opened;
        try {
          return await call(...args);
        } finally {
          returned.open();
        }
      };
    });
    const inbox = pgBossInbox({ boss: gated, name, logger: false });
    opened.push(inbox);
    const router = createEventRouter().onAny(() => {
      throw new Error('the CRM is down');
    });
    opened.push(
      await inbox.startWorker(router, {
        attempts: 1,
        timeoutMs: 100,
        idempotency: { store: new MemoryStore({ logger: false }), leaseMs: 1000 },
        logger: false,
      }),
    );
    await inbox.enqueue(delivery);
    await reached.opened;
    // The held try's claim lapses (as pg-boss's expiry does) and another worker claims the job.
    await boss.fail(name, id, { error: 'expired' });
    const [taken] = await boss.fetch<unknown>(name, { includeMetadata: true, ignoreStartAfter: true });
    expect(taken?.id).toBe(id);
    release.open();
    await returned.opened;
    // The other worker's try succeeds (the CRM is back): the event was processed, and is not dead.
    expect(await boss.complete(name, { id, retryCount: taken!.retryCount })).toMatchObject({ affected: 1 });
    expect((await inbox.status()).dead).toBe(0);
    expect(await inbox.deadLetters()).toEqual([]);
    expect((await boss.findJobs(name, { id }))[0]?.state).toBe('completed');
  }, 60_000);
  it('a fetch already under way when the queue is paused starts no try: the job waits, uncounted, for resume (issue 32)', async () => {
    const name = `paused-in-flight-${process.pid}`;
    const fetching = gate('the worker fetching', 30_000);
    const release = gate('the pause and the enqueue', 30_000);
    let armed = true;
    let fetched: string | undefined;
    let pausedReads = 0;
    const gated = intercepted(boss, (property, call) => {
      if (property === 'fetch')
        return async (...a) => {
          if (!armed) return call(...a);
          armed = false;
          // The loop read "not paused" and is on its way to the database when the pause lands.
          fetching.open();
          await release.opened;
          const jobs = (await call(...a)) as { id: string }[];
          fetched = jobs[0]?.id;
          return jobs;
        };
      if (property === 'getQueue')
        return async (...a) => {
          const flag = await call(...a);
          if (a[0] === `${name}${PAUSED_SUFFIX}` && flag !== null) pausedReads++;
          return flag;
        };
      return null;
    });
    const inbox = pgBossInbox({ boss: gated, name, logger: false });
    opened.push(inbox);
    const runs: string[] = [];
    const records: JobRecord[] = [];
    const router = createEventRouter().on('ag.access_pass.issued', (event) => void runs.push(event.id));
    opened.push(
      await inbox.startWorker(router, {
        idempotency: false,
        attempts: 1,
        logger: false,
        onJob: (record) => void records.push(record),
      }),
    );
    await fetching.opened;
    await inbox.pause();
    await inbox.enqueue(queued('evt-paused-in-flight'));
    release.open();
    // The held fetch brings the job, and its try settles: put back (retry), not run (completed).
    const settledState = async () =>
      fetched === undefined ? undefined : (await boss.findJobs(name, { id: fetched }))[0];
    await eventually(
      'the fetched job settled',
      async () => !['created', 'active', undefined].includes((await settledState())?.state),
      30_000,
    );
    expect(runs).toEqual([]);
    const job = await settledState();
    expect(job?.state).toBe('retry');
    expect(job?.data).toMatchObject({ putBacks: 1 });
    // The loop goes round and reads the flag from the database, past what the pause told it: still
    // paused, nothing runs and nothing is dead.
    const readsBefore = pausedReads;
    await eventually('the worker reading the flag paused', () => pausedReads > readsBefore, 30_000);
    expect(runs).toEqual([]);
    expect((await inbox.status()).dead).toBe(0);
    await inbox.resume();
    await eventually('the held event runs once resumed', () => runs.length === 1, 30_000);
    // It ran as its first attempt (attempts: 1): the put-back counted none.
    expect(records.map((r) => [r.outcome, r.attempt])).toEqual([['processed', 1]]);
    expect(runs).toEqual(['evt-paused-in-flight']);
  }, 60_000);

  it('a read of the pause flag the database answered late is as old as its question: the loop reads it again instead of fetching on it (issue 32)', async () => {
    const name = `paused-late-read-${process.pid}`;
    const asked = gate('the worker reading the pause flag', 30_000);
    const answer = gate('the late answer', 30_000);
    let late = true;
    let pausedReads = 0;
    let fetches = 0;
    // Another process's inbox: it hears of the pause only from the flag, through this boss.
    const gated = intercepted(boss, (property, call) => {
      if (property === 'getQueue')
        return async (...a) => {
          if (a[0] !== `${name}${PAUSED_SUFFIX}`) return call(...a);
          const flag = await call(...a);
          if (late) {
            // The database said "not paused"; the answer reaches the worker only after the pause.
            late = false;
            asked.open();
            await answer.opened;
          } else if (flag !== null) pausedReads++;
          return flag;
        };
      if (property === 'fetch') return (...a) => call(...a).finally(() => void fetches++);
      return null;
    });
    const there = pgBossInbox({ boss: gated, name, logger: false });
    const here = pgBossInbox({ boss, name, logger: false });
    opened.push(there, here);
    const runs: string[] = [];
    const router = createEventRouter().on('ag.access_pass.issued', (event) => void runs.push(event.id));
    const worker = there.startWorker(router, { idempotency: false, concurrency: 1, logger: false });
    await asked.opened;
    await here.pause();
    // The question is now older than a read is trusted for (a lower bound: a busy machine only adds).
    await new Promise((resolve) => setTimeout(resolve, PAUSE_READ_MS + 100));
    const before = fetches;
    answer.open();
    opened.push(await worker);
    // The loop that waited for that answer fetches once on it (nothing is queued yet), then asks again.
    await eventually('the fetch made on the late answer', () => fetches > before, 30_000);
    await here.enqueue(queued('evt-paused-late-read'));
    await eventually('the worker reading the flag paused', () => pausedReads > 0, 30_000);
    expect(runs).toEqual([]);
    expect((await here.status()).waiting).toBe(1);
    await here.resume();
    await eventually('the held event runs once resumed', () => runs.length === 1, 30_000);
    expect(runs).toEqual(['evt-paused-late-read']);
  }, 60_000);
});
