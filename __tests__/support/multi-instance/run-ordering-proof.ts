import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { buildEvent, DELIVERY_HEADERS } from '../../../lib/testing';
import { freePort } from '../server-binary';
import { Instance } from './run-proof';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One entity's events: a pass (ordered handler only) or a template (ordered, and one that is not). */
export interface EntityPlan {
  family: 'pass' | 'template';
  /** Each event's second (ties happen) and id letter (which breaks them). */
  events: { second: number; letter: string }[];
}

/** One delivery of the Service's: which event, to which instance, how its handlers behave. */
export interface Step {
  pick: number;
  instance: number;
  fail: boolean;
  delayMs: number;
  /** Sent at once with the next step. */
  withNext: boolean;
}

export interface Scenario {
  entities: EntityPlan[];
  steps: Step[];
  /** The order in which the events not yet acknowledged are then delivered until they are. */
  drainOrder: number[];
}

export const scenarioArbitrary: fc.Arbitrary<Scenario> = fc.record({
  entities: fc.array(
    fc.record({
      family: fc.constantFrom('pass' as const, 'template' as const),
      events: fc.array(
        fc.record({ second: fc.integer({ min: 0, max: 4 }), letter: fc.constantFrom('a', 'b', 'c') }),
        {
          minLength: 1,
          maxLength: 5,
        },
      ),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  steps: fc.array(
    fc.record({
      pick: fc.nat(),
      instance: fc.integer({ min: 0, max: 2 }),
      // One delivery in five fails: the Service then retries it.
      fail: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
      delayMs: fc.integer({ min: 0, max: 30 }),
      withNext: fc.boolean(),
    }),
    { minLength: 4, maxLength: 24 },
  ),
  drainOrder: fc.array(fc.nat(), { minLength: 16, maxLength: 16 }),
});

/** An event of a scenario, as sent and as ordered: time, then id. */
interface PlannedEvent {
  id: string;
  entity: string;
  family: 'pass' | 'template';
  time: string;
  body: string;
}

export interface RunFigures {
  events: number;
  deliveries: number;
  stale: number;
  conflicts: number;
  failures: number;
}

/** Three receiver processes sharing one store, and the ledger their handlers write. */
export class OrderingRig {
  readonly instances: Instance[] = [];
  readonly ledgerDir = mkdtempSync(path.join(tmpdir(), 'sw-ordering-ledger-'));
  readonly ledger = path.join(this.ledgerDir, 'ledger.log');

  static async start(libDir: string, store: string, storeUrl: string): Promise<OrderingRig> {
    const rig = new OrderingRig();
    writeFileSync(rig.ledger, '');
    const env = {
      ...process.env,
      NODE_PATH: path.join(ROOT, 'node_modules'),
      SW_LIB: libDir,
      STORE: store,
      STORE_URL: storeUrl,
      LEDGER: rig.ledger,
    };
    for (const name of ['a', 'b', 'c'])
      rig.instances.push(new Instance(name, await freePort(), env, 'ordering-receiver.js'));
    await Promise.all(rig.instances.map((i) => i.start()));
    return rig;
  }

  async stop(): Promise<void> {
    await Promise.all(this.instances.map((i) => i.kill()));
    rmSync(this.ledgerDir, { recursive: true, force: true });
  }

  /** Plays one scenario over HTTP and checks the ledger; throws (with what broke) when the property fails. */
  play(scenario: Scenario, run: string): Promise<RunFigures> {
    writeFileSync(this.ledger, '');
    const send: Send = async (instance, body, headers) => {
      const to = this.instances[instance % this.instances.length] as Instance;
      const response = await fetch(`http://127.0.0.1:${to.port}/hooks`, {
        method: 'POST',
        headers: { ...DELIVERY_HEADERS, Authorization: 'Bearer tok_proof', ...headers },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      const answer = (await response.json().catch(() => ({}))) as { status?: string };
      return { status: response.status, answer };
    };
    return playScenario(scenario, run, send, () => readFileSync(this.ledger, 'utf8'));
  }
}

/** Sends one delivery to receiver `instance` (taken modulo their number) and reads the answer. */
export type Send = (
  instance: number,
  body: string,
  headers: Record<string, string>,
) => Promise<{ status: number; answer: { status?: string } }>;

/**
 * Plays one scenario through `send` (the receivers' handlers write the ledger `readLedger` returns,
 * lines `start|ok|fail <handler> <event id> <instance>`), then checks the ledger.
 */
export async function playScenario(
  scenario: Scenario,
  run: string,
  send: Send,
  readLedger: () => string,
): Promise<RunFigures> {
  const events: PlannedEvent[] = scenario.entities.flatMap((plan, e) =>
    plan.events.map(({ second, letter }, k) => {
      const entity = `${run}-${plan.family}-${e}`;
      // Unique ids whose order follows the letter first: ties of time are broken by it.
      const id = `${run}-${e}-${letter}${k}`;
      const time = `2026-11-24T10:00:0${second}.000Z`;
      const type = plan.family === 'pass' ? 'ag.access_pass.updated' : 'ag.card_template.updated';
      const data = plan.family === 'pass' ? { id: entity } : { card_template_id: entity };
      return {
        id,
        entity,
        family: plan.family,
        time,
        body: JSON.stringify(buildEvent(type, data as never, { id, time })),
      };
    }),
  );
  const figures: RunFigures = { events: events.length, deliveries: 0, stale: 0, conflicts: 0, failures: 0 };
  const acked = new Set<string>();

  const deliver = async (event: PlannedEvent, instance: number, fail: boolean, delayMs: number) => {
    figures.deliveries++;
    const { status, answer } = await send(instance, event.body, {
      'x-proof-fail': fail ? '1' : '0',
      'x-proof-delay': String(delayMs),
    });
    if (status === 200) {
      acked.add(event.id);
      if (answer.status === 'stale') figures.stale++;
    } else if (status === 409) figures.conflicts++;
    else if (status === 500) figures.failures++;
    else throw new Error(`unexpected answer ${status} for ${event.id}`);
    return status === 200;
  };

  // The scenario's deliveries: some at once, to any instance, some failing, some redelivered.
  for (let i = 0; i < scenario.steps.length;) {
    const batch: Step[] = [];
    do batch.push(scenario.steps[i++] as Step);
    while (batch.at(-1)?.withNext && i < scenario.steps.length && batch.length < 3);
    await Promise.all(
      batch.map((s) =>
        deliver(events[s.pick % events.length] as PlannedEvent, s.instance, s.fail, s.delayMs),
      ),
    );
  }
  // Then the Service retries what is not acknowledged, all at once, until it is (bounded).
  const rest = events.filter((e) => !acked.has(e.id));
  const order = rest.map((e, i) => ({ e, k: scenario.drainOrder[i % scenario.drainOrder.length] ?? 0 }));
  order.sort((x, y) => x.k - y.k);
  await Promise.all(
    order.map(async ({ e }, n) => {
      for (let attempt = 0; attempt < 100; attempt++) {
        if (await deliver(e, n + attempt, false, 0)) return;
        await sleep(5 + attempt * 2);
      }
      throw new Error(`${e.id} was never acknowledged`);
    }),
  );
  checkLedger(readLedger(), events);
  return figures;
}

const newer = (a: PlannedEvent, b: PlannedEvent) => a.time > b.time || (a.time === b.time && a.id > b.id);

/**
 * What the ledger must show: per entity, an ordered handler never starts while another run of it is
 * going on (the lease), never starts for an event at or before one that already succeeded (newest
 * wins, and the newest runs once), and the newest event succeeds exactly once; the handler without
 * the option succeeds exactly once for every event.
 */
export function checkLedger(text: string, events: PlannedEvent[]): void {
  const byId = new Map(events.map((e) => [e.id, e]));
  const running = new Map<string, string>();
  const best = new Map<string, PlannedEvent>();
  const oks = new Map<string, number>();
  const problems: string[] = [];
  for (const line of text.split('\n').filter(Boolean)) {
    const [what, handler, id, instance] = line.split(' ') as [string, string, string, string];
    const event = byId.get(id);
    if (event === undefined) continue;
    if (handler === 'every') {
      if (what === 'ok') oks.set(`every ${id}`, (oks.get(`every ${id}`) ?? 0) + 1);
      continue;
    }
    const slot = `${handler} ${event.entity}`;
    if (what === 'start') {
      const other = running.get(slot);
      if (other !== undefined) problems.push(`${id} started on ${instance} while ${other} ran (no lease)`);
      const top = best.get(slot);
      if (top !== undefined && !newer(event, top))
        problems.push(`${id} (${event.time}) started after ${top.id} (${top.time}) succeeded`);
      running.set(slot, id);
    } else {
      running.delete(slot);
      if (what === 'ok') {
        oks.set(`${handler} ${id}`, (oks.get(`${handler} ${id}`) ?? 0) + 1);
        const top = best.get(slot);
        if (top === undefined || newer(event, top)) best.set(slot, event);
      }
    }
  }
  const entities = new Set(events.map((e) => e.entity));
  for (const entity of entities) {
    const own = events.filter((e) => e.entity === entity);
    const newest = own.reduce((a, b) => (newer(b, a) ? b : a));
    const handler = newest.family;
    const runs = oks.get(`${handler} ${newest.id}`) ?? 0;
    if (runs !== 1) problems.push(`the newest event ${newest.id} of ${entity} succeeded ${runs} times`);
    if (handler === 'template')
      for (const e of own) {
        const seen = oks.get(`every ${e.id}`) ?? 0;
        if (seen !== 1) problems.push(`the handler without ordering succeeded ${seen} times for ${e.id}`);
      }
  }
  if (problems.length > 0) throw new Error(`the ordering property failed:\n${problems.join('\n')}`);
}
