import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { EVENT_TYPES, type Logger } from '../lib';
import { ConsoleClient } from '../lib/console';
import { createEmulator, type AttemptRecord, type EmulatedDelivery, type Emulator } from '../lib/emulator';
import { parseScenario, type Scenario, type ScenarioDelivery } from '../lib/testing';
import { createDemoReceiver } from './demo-receiver';

/**
 * The demo's scenario file: every event type in both layouts, one handler failing once, one event
 * delivered again. Found from the repository's root both from source (the tests) and from
 * .demo-build (npm run demo).
 */
export const DEMO_SCENARIO = path.join(
  __dirname,
  __dirname.split(path.sep).includes('.demo-build') ? '../..' : '..',
  'scenarios',
  'demo.json',
);

export interface ScenarioRow {
  type: string;
  layout: string;
  eventId: string;
  /** Delivery attempts the emulator made. */
  attempts: number;
  /** What the emulator ended with. */
  delivery: EmulatedDelivery['state'];
  /** What the receiver answered last: its answer's `status` field, or its HTTP status. */
  receiver: string;
  note: string;
}

export interface DemoRun {
  ok: boolean;
  rows: ScenarioRow[];
  problems: string[];
  /** The emulator's web console: webhooks, events, every attempt with its answer, trigger and resend. */
  consoleUrl: string;
  close(): Promise<void>;
}

/** The answer's `status` field (`processed`, `duplicate`), or null when it has none. */
function answerStatus(attempt: AttemptRecord | undefined): string | null {
  try {
    const body = JSON.parse(attempt?.responseBody ?? '') as { status?: unknown } | null;
    return typeof body?.status === 'string' ? body.status : null;
  } catch {
    return null;
  }
}

/** Why the last attempt does not meet the delivery's expectation, or undefined when it does. */
function unmet({ expect }: ScenarioDelivery, last: AttemptRecord | undefined): string | undefined {
  if (expect?.status !== undefined && last?.status !== expect.status)
    return `answered ${last?.status ?? 'nothing'}, not ${expect.status}`;
  if (expect?.body !== undefined && answerStatus(last) !== expect.body.status)
    return `answered "${answerStatus(last)}", not "${expect.body.status}"`;
  return undefined;
}

/**
 * Plays the scenario through the emulator, as `service-webhooks trigger --scenario` does: each
 * delivery (then its repeats) once the one before is acknowledged or dropped, the emulator retrying
 * as the Service would, and the last attempt checked against the delivery's expectation.
 */
async function playThrough(
  emulator: Emulator,
  scenario: Scenario,
): Promise<{ rows: ScenarioRow[]; problems: string[] }> {
  const rows: ScenarioRow[] = [];
  const problems: string[] = [];
  const sent = new Set<string>();
  for (const [index, delivery] of scenario.deliveries.entries()) {
    for (let repeat = 0; repeat <= (delivery.repeat ?? 0); repeat++) {
      const { event, layout } = delivery;
      const again = sent.has(event.id);
      sent.add(event.id);
      const { deliveries } = emulator.deliver(event);
      await emulator.waitForDeliveries({ eventId: event.id }, { timeoutMs: 60_000 });
      const failsOnce = (event.data.metadata as { fail_once?: unknown } | undefined)?.fail_once === true;
      for (const started of deliveries) {
        const last = emulator.attempts
          .filter((a) => a.eventId === event.id && a.webhookId === started.webhookId)
          .at(-1);
        rows.push({
          type: event.type,
          layout,
          eventId: event.id,
          attempts: started.attempts,
          delivery: started.state,
          receiver: answerStatus(last) ?? String(last?.status ?? 'no answer'),
          note: again ? 'the same event delivered again' : failsOnce ? 'handler fails once, retried' : '',
        });
        const wrong = unmet(delivery, last);
        if (wrong !== undefined)
          problems.push(
            `delivery ${index}${repeat === 0 ? '' : ` (repeat ${repeat})`}, ${event.type} (${layout}): ${wrong}`,
          );
      }
    }
  }
  return { rows, problems };
}

/**
 * Starts the emulator (its web console is the demo's dashboard, on `port`) and the demo receiver,
 * registers it, plays the scenario file (`scenario`, {@link DEMO_SCENARIO} unless given) and checks
 * its expectations, and that every event was handled exactly once.
 */
export async function runDemo(
  options: { port?: number; print?: (line: string) => void; logger?: Logger | false; scenario?: string } = {},
): Promise<DemoRun> {
  const print = options.print ?? (() => undefined);
  const file = options.scenario ?? DEMO_SCENARIO;
  const scenario = parseScenario(JSON.parse(readFileSync(file, 'utf8')), file);
  const emulator = await createEmulator({
    port: options.port ?? 0,
    retryWindowMs: 60_000,
    initialBackoffMs: 200,
    maxBackoffMs: 2_000,
    logger: options.logger ?? false,
  });
  const demo = createDemoReceiver(options.logger ?? false);
  const server = http.createServer(demo.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = async () => {
    await emulator.close();
    await demo.drain();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };

  try {
    print(
      `emulator console API at ${emulator.url}; demo receiver at ${base}/webhooks, its metrics at ${base}/metrics`,
    );
    const client = new ConsoleClient({ baseUrl: emulator.url, ...emulator.account });
    const created = await client.createWebhook({
      name: 'demo receiver',
      url: `${base}/webhooks`,
      subscribedEvents: [...EVENT_TYPES],
    });
    demo.useToken(created.privateKey);
    const verified = await client.waitUntilVerified(created.id, { timeoutMs: 10_000, intervalMs: 50 });
    print(
      `registered webhook ${created.id} through the console API; handshake answered, verified: ${verified.verified}`,
    );

    print(`playing ${path.relative(process.cwd(), file)}: ${scenario.deliveries.length} deliveries`);
    const { rows, problems } = await playThrough(emulator, scenario);
    await demo.drain();

    for (const row of rows)
      if (row.delivery !== 'acknowledged') problems.push(`${row.type} (${row.layout}) was ${row.delivery}`);
    for (const eventId of new Set(rows.map((r) => r.eventId))) {
      const times = demo.handled.get(eventId) ?? 0;
      if (times !== 1) problems.push(`event ${eventId} was handled ${times} times, not once`);
    }
    // The demo's template handler fails the first attempt of an event marked fail_once, and only that.
    for (const row of rows.filter((r) => r.note.startsWith('handler fails once')))
      if (row.attempts !== 2) problems.push(`the flaky handler's event took ${row.attempts} attempts, not 2`);

    return { ok: problems.length === 0, rows, problems, consoleUrl: `${emulator.url}/`, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The scenario's outcome as an aligned text table. */
export function formatTable(rows: ScenarioRow[]): string {
  const header: ScenarioRow = {
    type: 'type',
    layout: 'layout',
    eventId: 'event id',
    attempts: 0,
    delivery: 'pending',
    receiver: 'receiver',
    note: 'note',
  };
  const cells = (r: ScenarioRow, head = false) => [
    r.type,
    r.layout,
    head ? 'attempts' : String(r.attempts),
    head ? 'delivery' : r.delivery,
    r.receiver,
    r.note,
  ];
  const all = [cells(header, true), ...rows.map((r) => cells(r))];
  const widths = all[0]!.map((_, i) => Math.max(...all.map((row) => row[i]!.length)));
  const line = (row: string[]) =>
    row
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(all[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...all.slice(1).map(line)].join('\n');
}

async function main(): Promise<void> {
  const once = process.argv.includes('--once');
  const portArg = process.argv.find((arg) => arg.startsWith('--port='));
  const logger: Logger = {
    info: (meta: { id?: string; layout?: string }, message: string) =>
      console.log(`  handled ${message.replace('[service-webhooks] ', '')}  [layout ${meta.layout}]`),
    warn: (_meta: unknown, message: string) => console.log(`  ${message}`),
    error: (_meta: unknown, message: string) => console.log(`  ${message}`),
  };
  const run = await runDemo({
    port: portArg ? Number(portArg.split('=')[1]) : undefined,
    print: console.log,
    logger: once ? false : logger,
  });
  console.log(`\n${formatTable(run.rows)}\n`);
  const events = new Set(run.rows.map((r) => r.eventId)).size;
  console.log(
    `${run.rows.length} deliveries of ${events} events; ${run.rows.filter((r) => r.delivery === 'acknowledged').length} acknowledged; every event handled exactly once: ${run.problems.length === 0 ? 'yes' : 'no'}`,
  );
  for (const problem of run.problems) console.log(`  problem: ${problem}`);
  if (once) {
    await run.close();
    process.exitCode = run.ok ? 0 : 1;
    return;
  }
  console.log(
    `\nWeb console: ${run.consoleUrl}  (every attempt with its answer; trigger and resend there; Ctrl-C to stop)`,
  );
  process.once('SIGINT', () => {
    void run.close().then(() => process.exit(run.ok ? 0 : 1));
  });
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
