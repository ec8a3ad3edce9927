import path from 'node:path';
import { builtPackage } from './support/built-package';
import { describeEachEngine } from './support/describe-each-engine';
import { runKillProof, type KillProofFigures } from './support/inbox-kill/run-kill-proof';

/** Replay a run with INBOX_KILL_SEED=<seed>. */
const seed = process.env.INBOX_KILL_SEED === undefined ? undefined : Number(process.env.INBOX_KILL_SEED);

function expectTheProof(figures: KillProofFigures): void {
  console.log(`[inbox kill proof] ${JSON.stringify(figures)}`);
  expect({
    lost: figures.lost,
    twice: figures.twice,
    deadWithoutReason: figures.deadWithoutReason,
    deadStateWrong: figures.deadStateWrong,
  }).toEqual({ lost: [], twice: [], deadWithoutReason: [], deadStateWrong: [] });
  expect(figures.handledOnce + figures.deadLetters).toBe(figures.events);
  // Every excuse needs a kill, and a killed worker had at most its concurrency's 8 jobs in flight (the
  // workers of inbox-kill/node.js), each with up to 3 handlers whose effect was written and whose
  // success the store had not answered: more means the excuse covers what no kill explains.
  expect(figures.rerunAfterKill.length).toBeLessThanOrEqual(8 * 3 * figures.kills.worker);
  // The faults happened: otherwise the proof proved nothing. How many kills it took is the machine's
  // schedule (a retry or a stalled job can reach a second process before the first is killed), not a
  // property of the inbox.
  expect([...figures.killedAt].sort()).toEqual(['kill-after-enqueue', 'kill-before-enqueue', 'kill-worker']);
  expect(figures.kills.receiver).toBeGreaterThanOrEqual(2);
  expect(figures.kills.worker).toBeGreaterThanOrEqual(1);
  expect(figures.redelivered).toBeGreaterThan(20);
  expect(figures.answers['200 duplicate'] ?? 0).toBeGreaterThan(0);
  expect(figures.deadLetters).toBeGreaterThan(0);
}

describeEachEngine('the inbox survives kills on $name', (engine, server) => {
  it('2 receivers and 2 workers, 500 events of three handlers, a worker and a receiver SIGKILLed: no handler lost, none twice', async () => {
    const { env, bin } = await builtPackage();
    const figures = await runKillProof({
      engine: engine.name,
      url: server().url,
      env: { ...env, SW_PKG: path.resolve(bin, '..', '..', '..') },
      inbox: (queue) => server().inbox(queue),
      ...(seed === undefined ? {} : { seed }),
    });
    expectTheProof(figures);
  }, 240_000);
});
