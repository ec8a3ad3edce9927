// Every replay filter walks its dead letters a page at a time through one loop (replay-pages.ts):
// onProgress hears of each page, an aborted signal stops it between pages with what was put back
// staying put back (none half replayed, none lost), and a dry run counts without putting back.
import type { Inbox, ReplayProgress } from '../lib';
import { PAGE } from '../lib/bullmq/bullmq-dead-letters';
import { REPLAY_BATCH } from '../lib/pg-boss/pg-boss-inbox';
import { describeEachEngine } from './support/describe-each-engine';
import { seedDeadLetters } from './support/seed-dead-letters';

describeEachEngine('replay with progress and a signal on $name', (engine, server) => {
  const page = engine.name === 'bullmq' ? PAGE : REPLAY_BATCH;
  // Three and a half pages: two thirds of one type, the others of another, every third one.
  const count = 3 * page + page / 2;
  const ofType = count - Math.floor(count / 3);
  let inbox: Inbox;
  let round = 0;
  /** A queue of its own holding `count` dead letters, for a test that puts some back. */
  async function seeded(): Promise<void> {
    await inbox?.close();
    const name = `progress-${process.pid}-${++round}`;
    inbox = server().inbox(name);
    await inbox.status(); // makes the queues
    await seedDeadLetters(engine, server().url, name, count);
  }
  beforeAll(seeded, 90_000);
  afterAll(() => inbox?.close());

  it('counts without putting back on a dry run, filter by filter', async () => {
    const progress: ReplayProgress[] = [];
    expect(await inbox.replay({}, { dryRun: true, onProgress: (p) => progress.push(p) })).toBe(count);
    expect(progress.at(-1)).toEqual({ replayed: 0, matched: count });
    const typed: ReplayProgress[] = [];
    await inbox.replay({ type: 'ag.hid_org.created' }, { dryRun: true, onProgress: (p) => typed.push(p) });
    expect(typed.at(-1)).toEqual({ replayed: 0, matched: count - ofType });
    expect(await inbox.status()).toMatchObject({ waiting: 0, dead: count });
  });

  it.each([
    [
      5,
      /^\[service-webhooks\] inbox\.replay: takes \{ signal\?, onProgress\?, dryRun\?, handlers\? \} as its second argument/,
    ],
    [
      { signall: new AbortController().signal },
      /inbox\.replay: unknown option "signall"; did you mean "signal"\?/,
    ],
    [{ signal: 'stop' }, /inbox\.replay: signal must be an AbortSignal/],
    [{ onProgress: 'bar' }, /inbox\.replay: onProgress must be a function/],
    [{ dryRun: 'yes' }, /inbox\.replay: dryRun must be true or false \(got yes\)/],
  ])('replay({}, %p) is refused and replays nothing', async (options, message) => {
    await expect(inbox.replay({}, options as never)).rejects.toThrow(message);
    expect((await inbox.status()).dead).toBe(count);
  });

  it('walks every page of a since filter, not only the first', async () => {
    await seeded();
    // Before every seeded failure: pg-boss's are dated from 2026-11-20, BullMQ's are now. Not 0:
    // a walk that misread a put-back job's time as 0 would stop at the first page.
    const since = new Date(Math.min(Date.UTC(2026, 10, 19), Date.now() - 3_600_000));
    const progress: ReplayProgress[] = [];
    expect(await inbox.replay({ since }, { onProgress: (p) => progress.push(p) })).toBe(count);
    expect(progress.length).toBeGreaterThanOrEqual(4);
    expect(await inbox.status()).toMatchObject({ waiting: count, dead: 0 });
  });

  it('reports each page, and resolves the whole count', async () => {
    await seeded();
    const progress: ReplayProgress[] = [];
    expect(await inbox.replay({}, { onProgress: (p) => progress.push(p) })).toBe(count);
    expect(progress.length).toBeGreaterThanOrEqual(4);
    expect(progress.at(-1)).toEqual({ replayed: count, matched: count });
    for (const [i, p] of progress.entries()) {
      expect(p.replayed).toBe(p.matched);
      if (i > 0) expect(p.matched).toBeGreaterThan(progress[i - 1]!.matched);
      expect(p.matched - (progress[i - 1]?.matched ?? 0)).toBeLessThanOrEqual(page);
    }
    expect(await inbox.status()).toMatchObject({ waiting: count, dead: 0 });
  });

  it('stops between pages once aborted: what was put back stays, the rest stays dead, none lost', async () => {
    await seeded();
    const abort = new AbortController();
    const progress: ReplayProgress[] = [];
    const replayed = await inbox.replay(
      { type: 'ag.access_pass.issued' },
      {
        signal: abort.signal,
        onProgress: (p) => {
          progress.push(p);
          if (progress.length === 2) abort.abort();
        },
      },
    );
    expect(progress).toHaveLength(2);
    expect(replayed).toBe(progress[1]!.replayed);
    expect(replayed).toBeGreaterThan(0);
    expect(replayed).toBeLessThan(ofType);
    // Whole dead letters only: every one is either queued or dead, never both, never neither.
    const status = await inbox.status();
    expect(status.waiting).toBe(replayed);
    expect(status.dead).toBe(count - replayed);
    const dead = await inbox.deadLetters({ limit: count });
    expect(new Set(dead.map((d) => d.delivery.id)).size).toBe(count - replayed);
    // The rest is replayed by the next run, and nothing twice.
    expect(await inbox.replay({ type: 'ag.access_pass.issued' })).toBe(ofType - replayed);
    expect(await inbox.status()).toMatchObject({ waiting: ofType, dead: count - ofType });
  });

  it('replays nothing with a signal aborted before it starts, and one event by id is one page', async () => {
    await seeded();
    const abort = new AbortController();
    abort.abort();
    const onProgress = jest.fn();
    expect(await inbox.replay({}, { signal: abort.signal, onProgress })).toBe(0);
    expect(onProgress).not.toHaveBeenCalled();
    expect((await inbox.status()).dead).toBe(count);
    const byId: ReplayProgress[] = [];
    expect(await inbox.replay('d-7', { onProgress: (p) => byId.push(p) })).toBe(1);
    expect(byId.at(-1)).toEqual({ replayed: 1, matched: 1 });
  });

  it('ends on what onProgress throws, keeping the page it put back', async () => {
    await seeded();
    await expect(
      inbox.replay(
        {},
        {
          onProgress: () => {
            throw new Error('the terminal went away');
          },
        },
      ),
    ).rejects.toThrow('the terminal went away');
    const status = await inbox.status();
    expect(status.waiting).toBeGreaterThan(0);
    expect(status.waiting).toBeLessThanOrEqual(page);
    expect(status.waiting + status.dead).toBe(count);
  });
});
