import { readFileSync } from 'node:fs';
import { DEMO_SCENARIO } from '../../demo-app/run-demo';
import { playScenario, type Scenario, type Target } from '../../lib/testing';

/** The token every app the demo's scenario is played against takes. */
export const DEMO_TOKEN = 'demo-token';

/**
 * Plays scenarios/demo.json against `target` (its receiver at `path`, taking {@link DEMO_TOKEN}) as
 * the Service would, a failed delivery sent again once, and checks what the demo promises: every
 * expectation of the file met, the flaky template event alone sent twice, the duplicate answered
 * duplicate, and each of the 54 events handled exactly once (`handled`, by event id, read once
 * `settled` resolves).
 */
export async function playDemoScenario(
  target: Target,
  path: string,
  handled: ReadonlyMap<string, number>,
  settled: () => Promise<unknown> = () => Promise.resolve(),
): Promise<void> {
  const scenario = JSON.parse(readFileSync(DEMO_SCENARIO, 'utf8')) as Scenario;
  const played = await playScenario(target, DEMO_SCENARIO, { token: DEMO_TOKEN, path, retries: 1 });
  await settled();
  expect(played).toHaveLength(scenario.deliveries.length);
  expect(new Set(played.map((p) => `${p.status} ${p.bodyStatus}`))).toEqual(
    new Set(['200 processed', '200 duplicate']),
  );
  expect(played.filter((p) => p.attempts === 2).map((p) => scenario.deliveries[p.index]?.event.type)).toEqual(
    ['ag.card_template.published'],
  );
  expect(played.at(-1)).toMatchObject({ bodyStatus: 'duplicate', eventId: played[0]?.eventId });
  const events = new Set(scenario.deliveries.map((d) => d.event.id));
  expect(events.size).toBe(54);
  expect([...events].map((id) => handled.get(id))).toEqual([...events].map(() => 1));
}
