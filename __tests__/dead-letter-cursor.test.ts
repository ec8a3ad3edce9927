// deadLetters({ after | before }) pages through every dead letter on both engines, a page at a time:
// forward from the newest with each page's last cursor, and back with each page's first, every
// dead letter reached exactly once, in one order, whatever ties the failure times hold (BullMQ fails
// many jobs in one millisecond). What a cursor may be is checked alike on both.
import type { DeadLetter, Inbox } from '../lib';
import { decodeCursor, encodeCursor } from '../lib/inbox/dead-letter-cursor';
import { describeEachEngine } from './support/describe-each-engine';
import { seedDeadLetters } from './support/seed-dead-letters';

const SEEDED = 1234;
const LIMIT = 100;

describe('a dead letter cursor', () => {
  it('reads back what it wrote', () => {
    for (const position of [
      { failedAt: '2026-11-20T00:00:01.000Z', id: '0f8c2a4e-1b1d-4c57-9d7e-3b0e6f0a1c2d' },
      { failedAt: 1_763_596_800_123, id: 'de:v1:evt_ü' },
    ])
      expect(decodeCursor(encodeCursor(position), 'w', 'after')).toEqual(position);
  });

  it.each<[string, unknown]>([
    ['not a string', 42],
    ['empty', ''],
    ['not base64url', 'a b'],
    ['not JSON', Buffer.from('{').toString('base64url')],
    ['JSON of another shape', Buffer.from('{"f":1}').toString('base64url')],
    ['an empty id', Buffer.from('[1,""]').toString('base64url')],
    ['too long', 'a'.repeat(1025)],
  ])('%s is refused, saying what to pass', (_name, cursor) => {
    expect(() => decodeCursor(cursor, 'inbox.deadLetters', 'after')).toThrow(
      /^\[service-webhooks\] inbox\.deadLetters: after must be the cursor of a dead letter, as deadLetters\(\) gives it in letter\.cursor/,
    );
  });
});

describeEachEngine('dead letters paged by cursor on $name', (engine, server) => {
  let inbox: Inbox;
  const name = `cursor-${process.pid}`;
  beforeAll(async () => {
    inbox = server().inbox(name);
    await inbox.status(); // makes pg-boss's queues
    await seedDeadLetters(engine, server().url, name, SEEDED, 'c', 120_000);
  }, 150_000);
  afterAll(async () => {
    await inbox?.close();
  });

  const ids = (letters: readonly DeadLetter[]) => letters.map((l) => l.delivery.id);

  /** Every page from the newest, each after the last one's cursor, and how many pages it took. */
  async function forward(query: { type?: string } = {}) {
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    for (; pages < 100; pages++) {
      const page = await inbox.deadLetters({
        limit: LIMIT,
        ...query,
        ...(after === undefined ? {} : { after }),
      });
      expect(page.length).toBeLessThanOrEqual(LIMIT);
      if (page.length === 0) break;
      seen.push(...ids(page));
      after = page.at(-1)!.cursor;
    }
    return { seen, pages };
  }

  it(`forward with each page's last cursor reaches all ${SEEDED} once, in the order one read gives`, async () => {
    const { seen, pages } = await forward();
    expect(pages).toBe(Math.ceil(SEEDED / LIMIT));
    expect(seen).toHaveLength(SEEDED);
    expect(new Set(seen).size).toBe(SEEDED);
    expect(seen).toEqual(ids(await inbox.deadLetters({ limit: SEEDED })));
  }, 60_000);

  it("back from the oldest with each page's first cursor reaches them all once, each page newest first", async () => {
    const all = await inbox.deadLetters({ limit: SEEDED });
    const seen: string[] = [];
    let before = all.at(-1)!.cursor!;
    seen.unshift(all.at(-1)!.delivery.id);
    for (let pages = 0; pages < 100; pages++) {
      const page = await inbox.deadLetters({ limit: LIMIT, before });
      if (page.length === 0) break;
      seen.unshift(...ids(page));
      before = page[0]!.cursor!;
    }
    expect(seen).toEqual(ids(all));
  }, 60_000);

  it('a type pages as well: every one of it once, none of another', async () => {
    const { seen } = await forward({ type: 'ag.hid_org.created' });
    const expected = Array.from({ length: SEEDED }, (_, i) => i).filter((i) => i % 3 === 2);
    expect(seen.sort()).toEqual(expected.map((i) => `c-${i}`).sort());
  }, 60_000);

  it("refuses after with before, and a cursor of the other engine's form", async () => {
    const [first] = await inbox.deadLetters({ limit: 1 });
    await expect(inbox.deadLetters({ after: first!.cursor!, before: first!.cursor! })).rejects.toThrow(
      /inbox\.deadLetters: takes after \(the next page\) or before \(the page before\), not both/,
    );
    const other =
      engine.name === 'bullmq'
        ? encodeCursor({ failedAt: '2026-11-20T00:00:00.000Z', id: '0f8c2a4e-1b1d-4c57-9d7e-3b0e6f0a1c2d' })
        : encodeCursor({ failedAt: 1, id: '7' });
    await expect(inbox.deadLetters({ after: other })).rejects.toThrow(
      /after is the cursor of another inbox's dead letter/,
    );
    await expect(inbox.deadLetters({ after: 'nope!' })).rejects.toThrow(
      /after must be the cursor of a dead letter/,
    );
  });
});
