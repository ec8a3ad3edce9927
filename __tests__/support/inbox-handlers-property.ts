// The property behind both engines (run by inbox-handlers.property.test.ts and its proof): routers
// of 1–5 named handlers, each failing on some of its first tries, events queued again and again, two
// workers on one queue sharing one store (Redis for BullMQ, PostgreSQL for pg-boss), dead letters
// replayed: every handler's effect happens exactly once per event, none is lost, and each handler's
// ctx.attempt counts its own tries.
import fc from 'fast-check';
import { createEventRouter, type HandlerContext, type IdempotencyStore, type Inbox } from '../../lib';
import { describeEachEngine } from './describe-each-engine';
import { eventually } from './inbox-engines';
import { queuedIssued as queued, sharedStore } from './queued-issued';

// Replay a failure with PROPERTY_SEED=<seed> (and the path fast-check prints).
const SEED = Number(process.env.PROPERTY_SEED ?? Date.now() % 1_000_000);
/** A job's tries: a handler failing on this many of its first tries goes to the dead letters. */
const ATTEMPTS = 3;

/** One run: how many handlers, and per event how often it is queued and how often each handler fails. */
const scenario = fc.record({
  handlers: fc.integer({ min: 1, max: 5 }),
  events: fc.array(
    fc.record({
      copies: fc.integer({ min: 1, max: 3 }),
      failures: fc.array(fc.integer({ min: 0, max: ATTEMPTS }), { minLength: 5, maxLength: 5 }),
    }),
    { minLength: 1, maxLength: 4 },
  ),
});
type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

/**
 * The property's suite, on each engine: `runs` scenarios (PROPERTY_RUNS overrides it), each on its own
 * queue, within `timeoutMs`.
 */
export function describeInboxHandlersProperty(defaultRuns: number, timeoutMs: number): void {
  const RUNS = Number(process.env.PROPERTY_RUNS ?? defaultRuns);
  describeEachEngine('each handler once behind the inbox, as a property on $name', (engine, server) => {
    let run = 0;

    async function play(s: Scenario, store: IdempotencyStore): Promise<void> {
      const name = `prop-${process.pid}-${SEED}-${++run}`;
      const handlerNames = Array.from({ length: s.handlers }, (_, i) => `h${i}`);
      /** Each (event, handler)'s tries, by ctx.attempt, and its effects (successes). */
      const tries = new Map<string, number[]>();
      const effects = new Map<string, number>();
      const router = () => {
        let r = createEventRouter();
        for (const [i, h] of handlerNames.entries())
          r = r.on(
            'ag.access_pass.issued',
            (e: { id: string }, ctx: HandlerContext) => {
              const key = `${e.id}/${h}`;
              const seen = [...(tries.get(key) ?? []), ctx.attempt];
              tries.set(key, seen);
              const event = s.events[Number(e.id.split('-').at(-1))];
              if (seen.length <= (event?.failures[i] ?? 0)) throw new Error(`${h} fails try ${seen.length}`);
              effects.set(key, (effects.get(key) ?? 0) + 1);
            },
            { name: h },
          );
        return r;
      };
      const inboxes: Inbox[] = [server().inbox(name), server().inbox(name)];
      const workers = [];
      try {
        for (const inbox of inboxes)
          workers.push(
            await inbox.startWorker(router(), {
              attempts: ATTEMPTS,
              backoff: { delayMs: 10, maxDelayMs: 10 },
              concurrency: 2,
              idempotency: { store, scope: name },
              logger: false,
            }),
          );
        const ids = s.events.map((_, i) => `${name}-${i}`);
        // Every copy queued, from either inbox, interleaved: the receiver's retries and duplicates.
        await Promise.all(
          s.events.flatMap((e, i) =>
            Array.from({ length: e.copies }, (_, c) => inboxes[c % 2]!.enqueue(queued(ids[i]!))),
          ),
        );
        const expected = ids.length * handlerNames.length;
        const allDone = () => [...effects.values()].filter((n) => n > 0).length === expected;
        const settled = async () => {
          const st = await inboxes[0]!.status();
          return st.waiting + st.delayed + st.active === 0;
        };
        // A handler failing on all its tries sends the job to the dead letters: replayed (plainly) until
        // every handler has succeeded; a handler fails at most ATTEMPTS times, so one replay suffices.
        await eventually('the queue settled', settled, 60_000);
        if ((await inboxes[0]!.status()).dead > 0) {
          await inboxes[0]!.replay({});
          await eventually('the replayed jobs settled', async () => allDone() && (await settled()), 60_000);
        }
        await eventually('every handler of every event succeeded', allDone, 60_000);
        expect((await inboxes[0]!.status()).dead).toBe(0);
        for (const id of ids)
          for (const [i, h] of handlerNames.entries()) {
            const key = `${id}/${h}`;
            // Exactly once: never lost, never again after its success was recorded.
            expect([key, effects.get(key)]).toEqual([key, 1]);
            // Its own tries, counted across the replay: 1, 2, … up to its failures and the success.
            const failures = s.events[Number(id.split('-').at(-1))]!.failures[i]!;
            expect([key, tries.get(key)]).toEqual([
              key,
              Array.from({ length: failures + 1 }, (_, k) => k + 1),
            ]);
          }
      } finally {
        for (const w of workers) await w.close();
        for (const inbox of inboxes) await inbox.close();
      }
    }

    it(
      `every handler's effect exactly once per event, none lost (seed ${SEED}, ${RUNS} runs)`,
      async () => {
        const shared = await sharedStore(engine, server(), 'handler_ledger');
        console.log(`[inbox handlers property] ${engine.name}: seed ${SEED}, ${RUNS} runs`);
        try {
          await fc.assert(
            fc.asyncProperty(scenario, (s) => play(s, shared.store)),
            // Each run is real queues and a real store: no shrinking marathon, the seed and path replay it.
            { seed: SEED, numRuns: RUNS, endOnFailure: true },
          );
        } finally {
          await shared.close();
        }
      },
      timeoutMs,
    );
  });
}
