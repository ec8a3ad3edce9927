import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { EVENT_TYPES, type Logger } from '../lib';
import { ConsoleClient } from '../lib/console';
import { createEmulator, type EmulatedDelivery } from '../lib/emulator';
import { createDemoReceiver } from './demo-receiver';

export interface ScenarioRow {
  type: string;
  layout: string;
  eventId: string;
  /** Delivery attempts the emulator made. */
  attempts: number;
  /** What the emulator ended with. */
  delivery: EmulatedDelivery['state'];
  /** What the receiver answered last. */
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

const FLAKY = { type: 'ag.card_template.published', layout: 'A' } as const;
const DUPLICATED = { type: 'ag.access_pass.issued', layout: 'A' } as const;

/**
 * Starts the emulator (its web console is the demo's dashboard, on `port`) and the demo receiver,
 * registers it, plays the scenario and checks the outcome.
 */
export async function runDemo(
  options: { port?: number; print?: (line: string) => void; logger?: Logger | false } = {},
): Promise<DemoRun> {
  const print = options.print ?? (() => undefined);
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

    const played: { delivery: EmulatedDelivery; layout: string; note: string }[] = [];
    for (const type of EVENT_TYPES) {
      for (const layout of ['A', 'B'] as const) {
        const flaky = type === FLAKY.type && layout === FLAKY.layout;
        const { deliveries } = emulator.emit(
          type,
          flaky ? { metadata: { color: 'navy', fail_once: true } } : {},
          { layout },
        );
        for (const delivery of deliveries)
          played.push({ delivery, layout, note: flaky ? 'handler fails once, retried' : '' });
      }
    }
    const original = played.find(
      (p) => p.delivery.type === DUPLICATED.type && p.layout === DUPLICATED.layout,
    );
    if (original) {
      await emulator.waitForDeliveries({ eventId: original.delivery.eventId });
      const [again] = emulator.deliver(original.delivery.envelope).deliveries;
      if (again)
        played.push({ delivery: again, layout: original.layout, note: 'the same event delivered again' });
    }
    await emulator.waitForIdle({ timeoutMs: 60_000 });
    await demo.drain();

    const lastAnswer = new Map(demo.log.map((entry) => [`${entry.eventId}#${entry.attempt}`, entry.outcome]));
    const attemptsBefore = new Map<string, number>();
    const rows: ScenarioRow[] = played.map(({ delivery, layout, note }) => {
      const before = attemptsBefore.get(delivery.eventId) ?? 0;
      attemptsBefore.set(delivery.eventId, before + delivery.attempts);
      return {
        type: delivery.type,
        layout,
        eventId: delivery.eventId,
        attempts: delivery.attempts,
        delivery: delivery.state,
        receiver: lastAnswer.get(`${delivery.eventId}#${before + delivery.attempts}`) ?? 'no answer',
        note,
      };
    });

    const problems: string[] = [];
    for (const row of rows)
      if (row.delivery !== 'acknowledged') problems.push(`${row.type} (${row.layout}) was ${row.delivery}`);
    for (const eventId of new Set(rows.map((r) => r.eventId))) {
      const times = demo.handled.get(eventId) ?? 0;
      if (times !== 1) problems.push(`event ${eventId} was handled ${times} times, not once`);
    }
    const flakyRow = rows.find((r) => r.note.startsWith('handler fails once'));
    if (flakyRow?.attempts !== 2)
      problems.push(`the flaky handler's event took ${flakyRow?.attempts} attempts, not 2`);
    const duplicateRow = rows.find((r) => r.note.startsWith('the same event'));
    if (duplicateRow?.receiver !== 'duplicate')
      problems.push(`the duplicate delivery was answered "${duplicateRow?.receiver}", not duplicate`);

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
