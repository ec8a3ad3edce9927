import { createEventRouter, RateLimited, RetryLater, type Inbox, type JobRecord } from '../lib';
import { delivery, issued, TOKEN } from './support/contract-rows';
import { describeEachEngine } from './support/describe-each-engine';
import { enqueueEvent } from './support/enqueue-event';
import { fetchDoor } from './support/doors';
import { eventually } from './support/inbox-engines';

describe('RateLimited', () => {
  it('is a RetryLater with its own name, its seconds rounded up as RetryLater does', () => {
    const error = new RateLimited('the CRM answered 429', { retryAfterSeconds: 1.2 });
    expect(error).toBeInstanceOf(RetryLater);
    expect([error.name, error.message, error.retryAfterSeconds]).toEqual([
      'RateLimited',
      'the CRM answered 429',
      2,
    ]);
    expect(new RateLimited().retryAfterSeconds).toBeUndefined();
  });

  it('on the sync path is answered 503 + Retry-After, not acknowledged: the retry runs the handler again', async () => {
    let runs = 0;
    const router = createEventRouter().on('ag.access_pass.issued', () => {
      runs++;
      if (runs === 1) throw new RateLimited('the CRM answered 429', { retryAfterSeconds: 7 });
    });
    const door = await fetchDoor.open({ bearerTokens: [TOKEN], router, logger: false });
    try {
      const request = delivery(issued({}, 'evt_rate_limited_sync'));
      const refused = await door.send(request);
      expect([refused.status, refused.headers['retry-after'], refused.headers['content-type']]).toEqual([
        503,
        '7',
        'application/problem+json; charset=utf-8',
      ]);
      expect(JSON.parse(refused.text)).toMatchObject({ status: 503 });
      const again = await door.send(request);
      expect([again.status, runs]).toEqual([200, 2]);
    } finally {
      await door.close();
    }
  });
});

const EVENTS = 20;
const HOLD_SECONDS = 2;
/** Two workers on their own connections, two tries at once each. */
const WORKERS = 2;
const CONCURRENCY = 2;
/**
 * The starts counted after the RateLimited: most of the hold, leaving its end to the engine's timing.
 * Only a try fetched before the hold and started after it may fall in: at most the other slots.
 */
const WINDOW_MS = HOLD_SECONDS * 1000 - 500;

let queues = 0;

describeEachEngine('a handler’s RateLimited on $name', (_engine, server) => {
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of opened.reverse()) await o.close();
    opened.length = 0;
  });

  it(`holds every worker of the queue for its ${HOLD_SECONDS} s and puts the event back with its attempt kept; none lost, none twice`, async () => {
    const name = `rate-limited-${process.pid}-${++queues}`;
    const inboxes = Array.from({ length: WORKERS }, () => server().inbox(name));
    opened.push(...inboxes);
    const [first] = inboxes as [Inbox];
    await first.pause();
    await Promise.all(Array.from({ length: EVENTS }, (_, i) => enqueueEvent(first, `evt_rl_${i}`)));

    const starts: { id: string; at: number }[] = [];
    const done = new Map<string, number>();
    let limitedAt: number | undefined;
    let limitedId: string | undefined;
    const router = createEventRouter().on('ag.*', (event) => {
      starts.push({ id: event.id, at: Date.now() });
      if (limitedAt === undefined) {
        limitedAt = Date.now();
        limitedId = event.id;
        throw new RateLimited('the partner API answered 429', { retryAfterSeconds: HOLD_SECONDS });
      }
      done.set(event.id, (done.get(event.id) ?? 0) + 1);
    });
    const records: JobRecord[] = [];
    for (const inbox of inboxes)
      opened.push(
        await inbox.startWorker(router, {
          concurrency: CONCURRENCY,
          // One attempt: a RateLimited that spent it would dead-letter the event.
          attempts: 1,
          logger: false,
          onJob: (record) => records.push(record),
        }),
      );
    await first.resume();

    await eventually('every event runs', () => done.size === EVENTS, 60_000);
    const at = limitedAt as number;
    const inWindow = starts.filter((s) => s.at > at && s.at < at + WINDOW_MS);
    expect(inWindow.length).toBeLessThanOrEqual(WORKERS * CONCURRENCY - 1);
    // The event held back ran once more, after the hold: EVENTS + 1 tries in all.
    expect(starts).toHaveLength(EVENTS + 1);
    expect([...done.values()].every((n) => n === 1)).toBe(true);
    expect((await first.deadLetters()).length).toBe(0);
    // Both tries of the limited event are attempt 1: the first is a retry, not a failure counted.
    await eventually('onJob heard every try', () => records.length === EVENTS + 1);
    const limited = records.filter((r) => r.eventId === limitedId);
    expect(limited.map((r) => [r.attempt, r.outcome])).toEqual([
      [1, 'retry'],
      [1, 'processed'],
    ]);
    expect(records.every((r) => r.attempt === 1)).toBe(true);
  }, 90_000);
});
