// BullMQ's issues come from a tally of our own, kept as dead letters come and go, so issues() never
// walks the failed set once the tally is filled: counted when a worker fails a job for good,
// uncounted when a replay puts it back, and reconciled (a bounded step per read) with what BullMQ
// did without us: jobs removed, cleaned by age, or failed by a worker that is not ours.
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { createEventRouter, type Inbox, type InboxWorker } from '../lib';
import { bullmqInbox } from '../lib/bullmq';
import { mergeIssues, readIssues } from '../lib/bullmq/bullmq-issues';
import { MAX_ISSUES } from '../lib/inbox/check-dead-letter-query';
import { redisIssueTally, type IssueTallyStore, type TallyClient } from '../lib/bullmq/redis-issue-tally';
import { issueRefsOf } from '../lib/inbox/inbox-issue';
import { jobIdFor, type QueuedDelivery } from '../lib/inbox/queued-delivery';
import { eventually } from './support/inbox-engines';
import { describeWithRedis, startRedisServer, type RedisServer } from './support/redis-server';
import { seededDelivery } from './support/seed-dead-letters';

/** The error each event's handler throws while it fails: its id says which fault. */
function faultOf(id: string): Error {
  const n = Number(id.split('-').at(-1));
  if (id.startsWith('slow-')) return new Error(`timeout after ${5000 + n * 37} ms for ap_${n}`);
  return new TypeError(`cannot read 'pass_${n}' of undefined`);
}

/** Seeded ids: every third one is `ag.hid_org.created`, the rest `ag.access_pass.issued`. */
const deliveries = (prefix: string, count: number): QueuedDelivery[] =>
  Array.from({ length: count }, (_, i) => seededDelivery(prefix, i));

/** Adds events straight through BullMQ with one try each, as a producer of someone else's would. */
async function addOnce(queue: Queue, events: QueuedDelivery[]): Promise<void> {
  await queue.addBulk(
    events.map((d) => ({ name: d.type, data: d, opts: { jobId: jobIdFor(d.key), attempts: 1 } })),
  );
}

describeWithRedis('BullMQ issues from a tally', () => {
  let server: RedisServer;
  let redis: Redis;
  let queues = 0;
  const open: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
  }, 60_000);
  afterEach(async () => {
    for (const close of open.splice(0).reverse()) await close();
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.close();
  });

  /** An inbox on a queue of the test's own (its failed-set reads counted), and the raw tally. */
  function setup(fixed = new Set<string>()) {
    const name = `tally-${++queues}`;
    const queue = new Queue(name, { connection: { url: server.url } });
    let walks = 0;
    const getFailed = queue.getFailed.bind(queue);
    queue.getFailed = (start?: number, end?: number) => {
      walks++;
      return getFailed(start, end);
    };
    const inbox = bullmqInbox({ queue, logger: false });
    const tally = redisIssueTally(() => Promise.resolve(redis as unknown as TallyClient), 'bull', name);
    const runs: string[] = [];
    const router = createEventRouter().onAny((event) => {
      runs.push(event.id);
      if (!fixed.has(event.id)) throw faultOf(event.id);
    });
    open.push(
      () => queue.close(),
      () => inbox.close(),
    );
    return { name, queue, inbox, tally, router, runs, fixed, walks: () => walks };
  }

  async function worker(inbox: Inbox, router: ReturnType<typeof createEventRouter>, concurrency = 4) {
    const started: InboxWorker = await inbox.startWorker(router, { attempts: 1, concurrency, logger: false });
    open.push(() => started.close());
    return started;
  }

  /** `count` seeded events failed by a worker of someone else's (not ours: none is tallied). */
  async function failedByOther(name: string, queue: Queue, prefix: string, count: number) {
    const other = new Worker(name, async () => Promise.reject(new Error('the CRM is down')), {
      connection: { url: server.url },
      concurrency: 50,
    });
    open.push(() => other.close());
    await addOnce(queue, deliveries(prefix, count));
    await eventually('failed', async () => (await queue.getFailedCount()) === count, 60_000);
    await other.close();
  }

  /** The tally as stored: each issue's [type, fingerprint, count], largest first. */
  async function counts(tally: IssueTallyStore) {
    return (await tally.read({ limit: 1000 }))
      .map((i) => [i.type, `${i.error.name}: ${i.error.message}`, i.count] as const)
      .sort((a, b) => b[2] - a[2] || (a.join() < b.join() ? -1 : 1));
  }

  const SLOW = 'Error: timeout after <n> ms for <id>';
  const TYPE = 'TypeError: cannot read <value> of undefined';
  const PASS = 'ag.access_pass.issued';
  const ORG = 'ag.hid_org.created';

  it.each([
    [
      'masked variants of one fault are one issue per type',
      ['slow-0', 'slow-1', 'slow-3', 'slow-4'],
      [[PASS, SLOW, 4]],
    ],
    [
      'two types are two issues',
      ['slow-0', 'slow-1', 'slow-2'],
      [
        [PASS, SLOW, 2],
        [ORG, SLOW, 1],
      ],
    ],
    [
      'two faults of one type are two issues',
      ['slow-0', 'type-1', 'type-3'],
      [
        [PASS, TYPE, 2],
        [PASS, SLOW, 1],
      ],
    ],
  ] as const)(
    'groups dead letters as they fail, never walking the failed set: %s',
    async (_, ids, expected) => {
      const { inbox, tally, router, walks } = setup();
      expect(await inbox.issues()).toEqual([]); // fills the (empty) tally: the one walk
      const walked = walks();
      await worker(inbox, router);
      for (const id of ids) {
        const [prefix, n] = id.split('-') as [string, string];
        await inbox.enqueue(seededDelivery(prefix, Number(n)));
      }
      await eventually('dead letters', async () => (await inbox.status()).dead === ids.length);
      await eventually(
        'tallied',
        async () => (await counts(tally)).reduce((n, c) => n + c[2], 0) === ids.length,
      );
      expect(await counts(tally)).toEqual(expected);
      const issues = await inbox.issues();
      expect(issues.map((i) => i.count).sort()).toEqual(expected.map((e) => e[2]).sort());
      for (const issue of issues) {
        expect(issue.sampleEventIds).toHaveLength(issue.count);
        expect(issue.firstSeen.getTime()).toBeLessThanOrEqual(issue.lastSeen.getTime());
      }
      expect(walks()).toBe(walked);
      // The key is the one every engine computes from the letter.
      for (const letter of await inbox.deadLetters())
        expect(issues.map((i) => i.key)).toEqual(
          expect.arrayContaining(issueRefsOf(letter).map((r) => r.key)),
        );
    },
  );

  it('uncounts what a replay puts back, by issue and by id, and counts a letter again when it fails again', async () => {
    const { inbox, tally, router, fixed, runs } = setup();
    await inbox.issues();
    await worker(inbox, router);
    const letters = ['slow-0', 'slow-1', 'slow-3', 'type-0', 'type-1'];
    for (const id of letters) await inbox.enqueue(seededDelivery(id.split('-')[0]!, Number(id.at(-1))));
    await eventually(
      'tallied',
      async () => (await counts(tally)).length === 2 && (await inbox.status()).dead === 5,
    );
    const slow = (await inbox.issues()).find((i) => i.error.message.startsWith('timeout'))!;
    fixed.add('slow-0').add('slow-1').add('slow-3');
    expect(await inbox.replay({ issue: slow.key })).toBe(3);
    // Straight after the replay, before any reconcile: the tally as stored.
    expect(await counts(tally)).toEqual([[PASS, TYPE, 2]]);
    await eventually('ran', () => runs.filter((r) => r.startsWith('slow')).length === 6);
    expect(await inbox.replay('type-0')).toBe(1);
    await eventually('failed again', async () => (await inbox.status()).dead === 2);
    await eventually('counted again', async () => (await counts(tally))[0]?.[2] === 2);
    expect(await counts(tally)).toEqual([[PASS, TYPE, 2]]);
  });

  it('a failure newer than the one replayed stays counted', async () => {
    const { tally } = setup();
    const refs = issueRefsOf({ delivery: { type: PASS }, lastError: 'Error: the CRM is down' });
    await tally.record('job-1', 1000, 'e-1', PASS, refs);
    await tally.record('job-1', 2000, 'e-1', PASS, refs); // replayed and failed again
    expect(await tally.remove([['job-1', 1000]])).toBe(0); // the first replay's late uncount
    expect(await counts(tally)).toEqual([[PASS, 'Error: the CRM is down', 1]]);
    expect((await tally.read({ limit: 1 }))[0]).toMatchObject({
      firstSeen: new Date(2000),
      lastSeen: new Date(2000),
    });
    expect(await tally.remove([['job-1', 2000]])).toBe(1);
    expect(await tally.read({ limit: 10 })).toEqual([]);
  });

  it('reconciles jobs BullMQ removed, cleaned by age, or failed without our worker', async () => {
    const { name, queue, inbox, tally, router } = setup();
    await inbox.issues();
    const ours = await worker(inbox, router);
    for (const d of deliveries('slow', 6)) await inbox.enqueue(d);
    await eventually('tallied', async () => (await counts(tally)).reduce((n, c) => n + c[2], 0) === 6);
    // Removed through BullMQ (as bull-board does): the stored tally does not know.
    await (await queue.getJob(jobIdFor(seededDelivery('slow', 0).key)))!.remove();
    await (await queue.getJob(jobIdFor(seededDelivery('slow', 2).key)))!.remove();
    expect(await counts(tally)).toEqual([
      [PASS, SLOW, 4],
      [ORG, SLOW, 2],
    ]);
    expect((await inbox.issues()).map((i) => [i.type, i.count]).sort()).toEqual([
      [PASS, 3],
      [ORG, 1],
    ]);
    // Cleaned by BullMQ's retention by age, the rest of them.
    expect(await queue.clean(0, 1000, 'failed')).toHaveLength(4);
    expect(await inbox.issues()).toEqual([]);
    // Failed by a worker of someone else's, not ours: counted by the next read.
    const other = new Worker(
      name,
      async (job: Job) => {
        throw new Error(`the CRM is down for ${(job.data as QueuedDelivery).id}`);
      },
      { connection: { url: server.url } },
    );
    open.push(() => other.close());
    await ours.close(); // takes none of these
    await addOnce(queue, deliveries('other', 3));
    await eventually('failed', async () => (await queue.getFailedCount()) === 3);
    expect(await counts(tally)).toEqual([]);
    const issues = await inbox.issues();
    expect(issues.map((i) => [i.type, i.error.message, i.count]).sort()).toEqual([
      [PASS, 'the CRM is down for <id>', 2],
      [ORG, 'the CRM is down for <id>', 1],
    ]);
  });

  it('fills the tally once from dead letters that predate it, then reads only the tally', async () => {
    const { name, queue, inbox, tally, walks } = setup();
    await failedByOther(name, queue, 'old', 7);
    expect(await tally.complete()).toBe(false);
    expect((await inbox.issues()).map((i) => i.count).sort()).toEqual([2, 5]);
    expect(walks()).toBeGreaterThan(0);
    expect(await tally.complete()).toBe(true);
    const walked = walks();
    expect((await inbox.issues()).map((i) => i.count).sort()).toEqual([2, 5]);
    expect(walks()).toBe(walked);
  });

  it('counts exactly with three workers failing and three replays racing', async () => {
    const first = setup();
    await first.inbox.issues();
    // Two more inboxes of the same queue, each with its own worker: three processes' worth.
    const inboxes = [first.inbox];
    for (let i = 0; i < 2; i++) {
      const inbox = bullmqInbox({ connection: server.url, name: first.name, logger: false });
      open.push(() => inbox.close());
      inboxes.push(inbox);
    }
    for (const inbox of inboxes) await worker(inbox, first.router, 5);
    const all = deliveries('slow', 60);
    await Promise.all(all.map((d) => first.inbox.enqueue(d)));
    await eventually('60 dead letters', async () => (await first.inbox.status()).dead === 60, 60_000);
    const total = async () => (await counts(first.tally)).reduce((n, c) => n + c[2], 0);
    await eventually('60 tallied', async () => (await total()) === 60);
    // Every inbox replays everything at once while the workers fail each letter again.
    for (let round = 0; round < 3; round++) {
      await Promise.all(inboxes.map((inbox) => inbox.replay({})));
      await eventually('all dead again', async () => (await first.inbox.status()).dead === 60, 60_000);
    }
    await eventually('60 tallied again', async () => (await total()) === 60);
    expect(await counts(first.tally)).toEqual([
      [PASS, SLOW, 40],
      [ORG, SLOW, 20],
    ]);
    // The very jobs BullMQ holds as failed.
    const failed = await first.queue.getFailed(0, 100);
    expect(new Set(failed.map((j) => j.id))).toEqual(new Set(all.map((d) => jobIdFor(d.key))));
  }, 120_000);

  it('replays an issue from its own tallied letters, walking no failed set, with each replay option', async () => {
    const { inbox, router, fixed, runs, walks, tally } = setup();
    await inbox.issues(); // the tally filled (nothing to walk yet)
    await worker(inbox, router);
    for (const d of [...deliveries('slow', 6), ...deliveries('type', 3)]) await inbox.enqueue(d);
    await eventually('tallied', async () => (await counts(tally)).reduce((n, c) => n + c[2], 0) === 9);
    const slow = (await inbox.issues()).find((i) => i.type === PASS && i.error.name === 'Error')!;
    const walked = walks();
    const progress: unknown[] = [];
    const onProgress = (p: unknown) => void progress.push(p);
    expect(await inbox.replay({ issue: slow.key }, { dryRun: true, onProgress })).toBe(4);
    expect(await inbox.replay({ issue: slow.key }, { signal: AbortSignal.abort(), onProgress })).toBe(0);
    expect(progress).toEqual([{ replayed: 0, matched: 4 }]);
    for (const i of [0, 1, 3, 4]) fixed.add(seededDelivery('slow', i).id);
    runs.length = 0;
    expect(await inbox.replay({ issue: slow.key }, { onProgress })).toBe(4);
    expect(progress.at(-1)).toEqual({ replayed: 4, matched: 4 });
    expect(walks()).toBe(walked);
    await eventually('the four run', () => runs.length === 4);
    expect(runs.sort()).toEqual([...fixed].sort());
    expect(await inbox.replay({ issue: slow.key })).toBe(0);
    expect(await counts(tally)).toEqual([
      [PASS, TYPE, 2],
      [ORG, SLOW, 2],
      [ORG, TYPE, 1],
    ]);
  });

  it('replays an issue by walking the failed set while the tally is not filled', async () => {
    const { name, queue, inbox, tally, walks } = setup();
    await failedByOther(name, queue, 'old', 7);
    // Read without filling the tally, as the CLI's read-only inbox does.
    const issues = await readIssues(queue, tally, { limit: 10 });
    const pass = issues.issues.find((i) => i.type === PASS)!;
    expect(await tally.complete()).toBe(false);
    expect(await inbox.replay({ issue: pass.key }, { dryRun: true })).toBe(5);
    expect(walks()).toBeGreaterThan(0);
    expect(await inbox.replay({ issue: pass.key })).toBe(5);
    expect(await queue.getFailedCount()).toBe(2);
  });

  it('replays an issue of more than a page from its tallied letters, past ids tallied but no longer failed', async () => {
    const { name, queue, inbox, tally, walks } = setup();
    await failedByOther(name, queue, 'many', 780); // 520 of PASS, over a page (500)
    const pass = (await inbox.issues()).find((i) => i.type === PASS)!;
    expect(pass.count).toBe(520);
    // Tallied, but gone from BullMQ (removed without us, not yet reconciled): newest, mid-way, oldest.
    const ref = { key: pass.key, handler: pass.handler, error: pass.error };
    const times = [pass.lastSeen.getTime() + 1, pass.firstSeen.getTime() + 1, pass.firstSeen.getTime() - 1];
    for (const [i, at] of times.entries()) await tally.record(`gone-${i}`, at, `gone-${i}`, PASS, [ref]);
    const walked = walks();
    const progress: { replayed: number; matched: number }[] = [];
    expect(await inbox.replay({ issue: pass.key }, { onProgress: (p) => void progress.push(p) })).toBe(520);
    expect(progress.length).toBeGreaterThan(1);
    expect(progress.at(-1)).toEqual({ replayed: 520, matched: 520 });
    expect(walks()).toBe(walked);
    expect(await queue.getFailedCount()).toBe(260);
    expect((await queue.getFailed(0, 300)).every((job) => (job.data as QueuedDelivery).type === ORG)).toBe(
      true,
    );
  }, 120_000);

  // The queue's tally and its quarantine queue's (a letter quarantined, and one of the same issue
  // replayed from there and failed again in the queue): their sums, whichever list an issue is old in.
  it.each([
    ['the newest', { limit: 1 }],
    ['since the quarantined one', { since: new Date(4000), limit: 5 }],
  ])("an issue in both tallies is summed whole, past the other tally's newest %s", async (_, query) => {
    const { name, queue, tally } = setup();
    const held = redisIssueTally(() => Promise.resolve(redis as unknown as TallyClient), 'bull', `${name}-q`);
    const [shared] = issueRefsOf({ delivery: { type: PASS }, lastError: 'Error: unknown field data.tier' });
    await tally.record('job-1', 1000, 'e-1', PASS, [shared!]);
    await tally.record('job-2', 1001, 'e-2', PASS, [shared!]);
    // More issues newer than it in the queue's tally than a read of it returns (MAX_ISSUES).
    const types = Array.from({ length: MAX_ISSUES }, (_, i) => `ag.other_${i}.created`);
    await Promise.all(
      types.map((type, i) =>
        tally.record(
          `other-${i}`,
          2000 + i,
          `o-${i}`,
          type,
          issueRefsOf({ delivery: { type }, lastError: null }),
        ),
      ),
    );
    expect(await tally.read({ limit: MAX_ISSUES + 1 })).toHaveLength(MAX_ISSUES + 1);
    await held.record('job-3', 5000, 'e-3', PASS, [shared!]);
    for (const t of [tally, held]) await t.markComplete();
    const issues = await mergeIssues(
      await Promise.all([readIssues(queue, tally, query), readIssues(queue, held, query)]),
      query,
    );
    expect(issues[0]).toMatchObject({
      key: shared!.key,
      count: 3,
      firstSeen: new Date(1000),
      lastSeen: new Date(5000),
      sampleEventIds: ['e-3', 'e-2', 'e-1'],
    });
  });
});
