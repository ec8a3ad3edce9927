// Issue 21 in the durable inbox: the ordering guard is checked when a worker runs the job, never at
// enqueue. Both engines, the receiver's Fetch door, real redis-server and PostgreSQL.
import { createEventRouter, type AnyWebhookEvent, type Inbox, type JobRecord } from '../lib';
import { buildEvent } from '../lib/testing';
import { delivery, TOKEN } from './support/contract-rows';
import { DOORS, type OpenDoor } from './support/doors';
import { describeEachEngine } from './support/describe-each-engine';
import { gate } from './support/gate';
import { eventually } from './support/inbox-engines';

const FETCH = DOORS.find((door) => door.name.startsWith('Fetch'))!;
let queues = 0;

/** An event of pass `pass` at `time`; its id says which, so the handlers' logs read plainly. */
const passEvent = (id: string, pass: string, time: string) =>
  buildEvent('ag.access_pass.updated', { id: pass }, { id, time });

describeEachEngine('ordered handlers behind the inbox on $name', (_engine, server) => {
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of opened.reverse()) await o.close();
    opened.length = 0;
  });

  async function receiverAndInbox(): Promise<{ door: OpenDoor; inbox: Inbox }> {
    const inbox = server().inbox(`ordering-${process.pid}-${++queues}`);
    opened.push(inbox);
    // The receiver runs no handler: an ordered one is only ever decided by the worker.
    const door = await FETCH.open({
      bearerTokens: [TOKEN],
      router: createEventRouter(),
      logger: false,
      inbox,
    });
    opened.push(door);
    return { door, inbox };
  }

  async function queue(door: OpenDoor, event: unknown) {
    const answer = await door.send(delivery(event));
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({ status: 'queued' });
  }

  it('skips an older event of an entity for the ordered handler (job outcome stale), and every handler without the option still sees it', async () => {
    const { door, inbox } = await receiverAndInbox();
    const ordered: string[] = [];
    const unordered: string[] = [];
    const jobs: JobRecord[] = [];
    const router = createEventRouter()
      .on('ag.access_pass.updated', (e: AnyWebhookEvent) => void ordered.push(e.id), {
        ordering: 'newest-wins',
      })
      .on('ag.access_pass.suspended', (e: AnyWebhookEvent) => void unordered.push(e.id));
    const worker = await inbox.startWorker(router, {
      backoff: { delayMs: 50 },
      logger: false,
      onJob: (record) => void jobs.push(record),
    });
    opened.push(worker);

    await queue(door, passEvent('newer', 'pass_1', '2026-11-24T10:05:00Z'));
    await eventually('the newer event processed', () => jobs.length === 1);
    await queue(door, passEvent('older', 'pass_1', '2026-11-24T10:00:00Z'));
    await queue(door, passEvent('other-pass', 'pass_2', '2026-11-24T09:00:00Z'));
    await eventually('all three jobs done', () => jobs.length === 3);

    expect(ordered.sort()).toEqual(['newer', 'other-pass']);
    expect(jobs.map((j) => [j.eventId, j.outcome]).sort()).toEqual([
      ['newer', 'processed'],
      ['older', 'stale'],
      ['other-pass', 'processed'],
    ]);
    // An older event of a type whose only handler is unordered runs as ever.
    await queue(
      door,
      buildEvent('ag.access_pass.suspended', { id: 'pass_1' }, { id: 'susp', time: '2026-11-24T09:59:00Z' }),
    );
    await eventually('the suspended event processed', () => unordered.includes('susp'));
    expect(jobs.at(-1)).toMatchObject({ eventId: 'susp', outcome: 'processed' });
  });

  it('advances nothing when the ordered handler fails: an older event of the entity still runs it', async () => {
    const { door, inbox } = await receiverAndInbox();
    const ordered: string[] = [];
    const jobs: JobRecord[] = [];
    const router = createEventRouter().on(
      'ag.access_pass.updated',
      (e: AnyWebhookEvent) => {
        if (e.id === 'newer') throw new Error('the database is down');
        ordered.push(e.id);
      },
      { ordering: 'newest-wins' },
    );
    const worker = await inbox.startWorker(router, {
      attempts: 1,
      logger: false,
      onJob: (record) => void jobs.push(record),
    });
    opened.push(worker);

    await queue(door, passEvent('newer', 'pass_1', '2026-11-24T10:05:00Z'));
    await eventually('the newer event dead-lettered', () => jobs.some((j) => j.outcome === 'dead'));
    await queue(door, passEvent('older', 'pass_1', '2026-11-24T10:00:00Z'));
    await eventually('the older event processed', () => jobs.length === 2);

    expect(ordered).toEqual(['older']);
    expect(jobs.map((j) => [j.eventId, j.outcome])).toEqual([
      ['newer', 'dead'],
      ['older', 'processed'],
    ]);
    expect((await inbox.deadLetters()).map((d) => d.delivery.id)).toEqual(['newer']);
  });

  it('puts back a job whose entity another job holds without spending its attempts: it runs once the entity frees', async () => {
    const { door, inbox } = await receiverAndInbox();
    const holding = gate('the holder started', 15_000);
    const release = gate('the waiter put back 3 times', 40_000);
    let waiterRuns = 0;
    const jobs: JobRecord[] = [];
    const router = createEventRouter().on(
      'ag.access_pass.updated',
      async (e: AnyWebhookEvent) => {
        if (e.id === 'holder') {
          holding.open();
          await release.opened;
        } else if (++waiterRuns === 1) throw new Error('the CRM blinked');
      },
      { ordering: 'newest-wins' },
    );
    const worker = await inbox.startWorker(router, {
      concurrency: 2,
      attempts: 2,
      backoff: { delayMs: 50 },
      logger: false,
      onJob: (record) => void jobs.push(record),
    });
    opened.push(worker);
    const waiter = () => jobs.filter((j) => j.eventId === 'waiter');

    await queue(door, passEvent('holder', 'pass_1', '2026-11-24T10:00:00Z'));
    await holding.opened;
    await queue(door, passEvent('waiter', 'pass_1', '2026-11-24T10:05:00Z'));
    // More busy tries than the job has attempts, none of them a failure.
    await eventually('the waiter put back 3 times', () => waiter().length >= 3, 40_000);
    release.open();
    await eventually(
      'the waiter processed',
      () => waiter().some((j) => j.outcome === 'processed' || j.outcome === 'dead'),
      30_000,
    );

    expect(waiterRuns).toBe(2);
    const records = waiter();
    // Busy tries all report the first attempt; then the real ones: 1 failed, 2 succeeded.
    expect(records.slice(0, -1).every((j) => j.outcome === 'retry' && j.attempt === 1)).toBe(true);
    expect(records.at(-1)).toMatchObject({ outcome: 'processed', attempt: 2 });
    expect(await inbox.deadLetters()).toEqual([]);
  }, 90_000);
});
