import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { idempotencyKey } from '../../../lib/idempotency/store-keys';
import { buildEvent, DELIVERY_HEADERS } from '../../../lib/testing';
import { freePort } from '../server-binary';
import { seeded } from '../seeded';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** A fault done to the store's server while the events are played: a connection kill, a freeze, … */
export interface ChaosAction {
  name: string;
  run(): Promise<void>;
}

export interface ProofOptions {
  store: 'redis' | 'ioredis' | 'postgres';
  storeUrl: string;
  events?: number;
  seed?: number;
  /** Faults done to the store's server, one every 0.4–1 s (seeded) while events are played. */
  chaos?: ChaosAction[];
  /** Handlers per event: 1, or 3 named ones each failing at random, checked one by one. Defaults to 1. */
  handlers?: 1 | 3;
}

export interface ProofFigures {
  store: string;
  seed: number;
  events: number;
  attempts: number;
  acks: number;
  duplicateAcks: number;
  concurrentDuplicatesSent: number;
  conflicts409: number;
  failures500: number;
  unavailable503: number;
  connectionErrors: number;
  kills: number;
  /** How many times each chaos action ran. */
  chaos: Record<string, number>;
  /** markDone calls given up on after their retries: the one window in which an event may run twice. */
  markDoneGivenUp: number;
  markDoneRecovered: number;
  seconds: number;
  /**
   * Events whose handlers succeeded other than exactly once, with the count; with three handlers,
   * each `event/handler` that ran again after its success was recorded, or never.
   */
  notExactlyOnce: [string, number][];
  /**
   * With three handlers: `event/handler` pairs that ran again because the store did not hear their
   * success (the receiver logged it: the window docs/delivery-guarantees.md states). Not a failure.
   * A record the store refused (its lease ran out: LEASE_MS is far above any run here) explains
   * nothing; it shows among what a process said of an unexplained one.
   */
  rerunUnrecorded: [string, number][];
  /**
   * Successes (events, or `event/handler` pairs) that ran twice because the SIGKILL cut the killed
   * process after its handler succeeded and before the store heard it: its ledger has the first run
   * and it never saw the store record it, so the event stayed claimed until the lease ran out and
   * ran again elsewhere (at least once across a crash: docs/many-instances.md). Not a failure.
   */
  rerunAfterKill: [string, number][];
  /**
   * Successes that ran twice after the process that ran them first gave up marking their event done
   * (it logged so, and never saw the store record them): the window docs/delivery-guarantees.md
   * states. Not a failure.
   */
  rerunAfterGiveUp: [string, number][];
  /**
   * For each of `notExactlyOnce`, what the proof knows of it, to read why in a failed run: each run
   * (its process's ledger file, ms after the start); what each process said of it (`stored` the
   * event's markDone or this handler's success, `gave up` marking it done) and which one the SIGKILL
   * cut; and each warning or error the receivers logged for its event, in time order (process, ms,
   * level, event id, handler, reason, message).
   */
  unexplained: { key: string; runs: string[]; said: string[]; logs: unknown[] }[];
  /** Events acknowledged (200/201) while the ledger held no success for them. */
  ackedBeforeSuccess: string[];
  unacknowledged: string[];
}

/** Compiles lib/ to plain JavaScript once, without type checking: the children need no loader. */
export function compileLibrary(): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'sw-proof-lib-'));
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const flags = ['--outDir', dir, '--noCheck', '--emitDeclarationOnly', 'false', '--declaration', 'false'];
  execFileSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json'), ...flags], {
    stdio: 'pipe',
    timeout: 120_000,
  });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One receiver process on a fixed port, so a restart comes back where the Service sends. */
export class Instance {
  child: ChildProcess | undefined;
  readonly lines: string[] = [];
  /** What the store's bookkeeping reported, across restarts. */
  readonly bookkeeping: string[] = [];
  /** `event/handler` successes the store did not record (logged by the receiver), across restarts. */
  readonly unrecorded: string[] = [];
  /** The receiver's warnings and errors of an event (`LOG` lines, JSON), by process, across restarts. */
  readonly logs: { pid: number | undefined; line: string }[] = [];
  /**
   * By process id, what each process said of its own successes: `stored`, those it saw the store
   * record (`[key]` for a markDone, `[key, handler]` for a markHandlerDone, as JSON); `refused`,
   * those the store refused (a lease run out) or failed on; `gaveUp`, the events it gave up marking
   * done (receiver.js prints all three).
   */
  readonly said = new Map<number, { stored: Set<string>; refused: Set<string>; gaveUp: Set<string> }>();
  constructor(
    readonly name: string,
    readonly port: number,
    private readonly env: NodeJS.ProcessEnv,
    /** The receiver script it runs, beside this file. */
    private readonly script = 'receiver.js',
  ) {}

  async start(): Promise<void> {
    const child = spawn(process.execPath, [path.join(__dirname, this.script)], {
      env: { ...this.env, INSTANCE: this.name, PORT: String(this.port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const said = { stored: new Set<string>(), refused: new Set<string>(), gaveUp: new Set<string>() };
    if (child.pid !== undefined) this.said.set(child.pid, said);
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => void (stderr += d.toString()));
    // Whole lines, never a chunk's split ones: a `STORED` or `UNRECORDED` line cut in two would be lost.
    createInterface({ input: child.stdout!, crlfDelay: Infinity }).on('line', (line: string) => {
      if (line === '') return;
      if (line.startsWith('BOOKKEEPING ')) this.bookkeeping.push(line.slice('BOOKKEEPING '.length));
      else if (line.startsWith('UNRECORDED ')) this.unrecorded.push(line.slice('UNRECORDED '.length));
      else if (line.startsWith('STORED ')) said.stored.add(line.slice('STORED '.length));
      else if (line.startsWith('REFUSED ')) said.refused.add(line.slice('REFUSED '.length));
      else if (line.startsWith('GAVE-UP ')) said.gaveUp.add(line.slice('GAVE-UP '.length));
      else if (line.startsWith('LOG ')) this.logs.push({ pid: child.pid, line: line.slice('LOG '.length) });
      else this.lines.push(line);
    });
    const deadline = Date.now() + 30_000;
    while (!this.lines.includes(`READY ${this.name}`)) {
      if (child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`receiver ${this.name} did not start: ${stderr.slice(-2000)}`);
      }
      await sleep(20);
    }
    this.lines.length = 0;
  }

  /** SIGKILLs the process; resolves once its output is read to the end ('close', not 'exit'). */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const closed = new Promise((resolve) => child.once('close', resolve));
    child.kill('SIGKILL');
    await closed;
  }
}

/**
 * Plays the Service against three receiver processes sharing one store: every event delivered until
 * acknowledged, each attempt to a random instance, some first attempts sent twice at once to two
 * instances, handlers failing or outrunning timeoutMs at random, and one instance SIGKILLed while
 * a handler runs and then restarted. Every handler success goes to a ledger file per process.
 */
export async function runProof(libDir: string, options: ProofOptions): Promise<ProofFigures> {
  const { events = 300, seed = Date.now() % 1_000_000 } = options;
  const random = seeded(seed);
  const ledgerDir = mkdtempSync(path.join(tmpdir(), 'sw-proof-ledger-'));
  const env = {
    ...process.env,
    NODE_PATH: path.join(ROOT, 'node_modules'),
    SW_LIB: libDir,
    STORE: options.store,
    STORE_URL: options.storeUrl,
    LEDGER_DIR: ledgerDir,
    TIMEOUT_MS: '300',
    // Far above the slowest handler (about 3 × timeoutMs) and a server's freeze or restart, so only a
    // killed instance's lease ever runs out; markDone retries get half of it.
    LEASE_MS: '8000',
    FAIL_RATE: '0.15',
    SLOW_RATE: '0.1',
    HANDLERS: String(options.handlers ?? 1),
  };
  const handlerNames = options.handlers === 3 ? ['h0', 'h1', 'h2'] : undefined;
  /** What the ledger keys a success by: the event, or each of its handlers. */
  const keysOf = (id: string) => (handlerNames === undefined ? [id] : handlerNames.map((h) => `${id}/${h}`));
  const instances = await Promise.all(
    ['a', 'b', 'c'].map(
      async (name, i) => new Instance(name, await freePort(), { ...env, SEED: String(seed + i) }),
    ),
  );
  const figures: ProofFigures = {
    store: options.store,
    seed,
    events,
    attempts: 0,
    acks: 0,
    duplicateAcks: 0,
    concurrentDuplicatesSent: 0,
    conflicts409: 0,
    failures500: 0,
    unavailable503: 0,
    connectionErrors: 0,
    kills: 0,
    chaos: {},
    markDoneGivenUp: 0,
    markDoneRecovered: 0,
    seconds: 0,
    notExactlyOnce: [],
    rerunUnrecorded: [],
    rerunAfterKill: [],
    rerunAfterGiveUp: [],
    unexplained: [],
    ackedBeforeSuccess: [],
    unacknowledged: [],
  };
  /** Each success in the ledger: each run's ledger file (`<instance>-<pid>.log`) and time written. */
  const successes = () => {
    const runs = new Map<string, { file: string; at: number }[]>();
    for (const file of readdirSync(ledgerDir).filter((f) => f.endsWith('.log'))) {
      for (const line of readFileSync(path.join(ledgerDir, file), 'utf8').split('\n')) {
        const [id, , at] = line.split(' ');
        if (id) runs.set(id, [...(runs.get(id) ?? []), { file, at: Number(at) }]);
      }
    }
    return runs;
  };
  /** The process the SIGKILL cut: its ledger file, and when. */
  let killed: { file: string; at: number } | undefined;
  const { source } = buildEvent('ag.hid_org.created', {}, { id: 'evt-0' });
  /**
   * Why `key` (an event, or `event/handler`) may have run twice, from the record of the process that
   * ran it first (its ledger file is `<instance>-<pid>.log`): that process never saw the store record
   * the success, and then it was killed (`kill`) or gave up marking the event done (`give-up`), and
   * the second run came after. Undefined when nothing shows it: then the second run is a fault.
   */
  const whyTwice = (key: string, runs: readonly { file: string; at: number }[]) => {
    if (runs.length !== 2) return undefined;
    const [first, again] = [...runs].sort((x, y) => x.at - y.at) as [(typeof runs)[0], (typeof runs)[0]];
    const [name, pid] = first.file.replace(/\.log$/, '').split('-');
    const said = instances.find((i) => i.name === name)?.said.get(Number(pid));
    if (said === undefined) return undefined;
    const [id, handler] = key.split('/') as [string, string | undefined];
    const storeKey = idempotencyKey('', source, id);
    if (said.stored.has(JSON.stringify([storeKey]))) return undefined;
    if (handler !== undefined && said.stored.has(JSON.stringify([storeKey, handler]))) return undefined;
    if (first.file === killed?.file && again.at > killed.at) return 'kill';
    if (said.gaveUp.has(id) && again.at > first.at) return 'give-up';
    return undefined;
  };
  /** The victim takes no new deliveries from the kill event's first attempt until its restart. */
  let avoid: Instance | undefined;
  const pick = (exclude?: Instance) => {
    const choices = instances.filter((i) => i !== avoid && i !== exclude);
    return choices[Math.floor(random() * choices.length)] ?? instances[0]!;
  };

  async function attempt(id: string, body: string, to: Instance): Promise<boolean> {
    figures.attempts++;
    let status: number;
    let answer: { status?: string } = {};
    try {
      const response = await fetch(`http://127.0.0.1:${to.port}/hooks`, {
        method: 'POST',
        headers: { ...DELIVERY_HEADERS, Authorization: 'Bearer tok_proof' },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      status = response.status;
      answer = (await response.json().catch(() => ({}))) as { status?: string };
    } catch {
      figures.connectionErrors++;
      return false;
    }
    if (status === 200 || status === 201) {
      // Read the ledger the moment the acknowledgement arrives: the success must already be there.
      const ledger = successes();
      if (!keysOf(id).every((key) => ledger.has(key))) figures.ackedBeforeSuccess.push(id);
      figures.acks++;
      if (answer.status === 'duplicate') figures.duplicateAcks++;
      return true;
    }
    if (status === 409) figures.conflicts409++;
    else if (status === 500) figures.failures500++;
    else if (status === 503) figures.unavailable503++;
    return false;
  }

  async function deliverUntilAcked(id: string, deadline: number): Promise<void> {
    const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id }));
    let first = true;
    while (Date.now() < deadline) {
      let acked: boolean;
      // The kill event goes to the victim until its handler hangs there: a first try the victim
      // answers 503 before its handler starts (the store frozen or restarting) must not send the
      // event to another instance, whose handler would hang in its place.
      if (id.startsWith('kill-') && figures.kills === 0 && !instances[0]!.lines.includes(`HANG ${id}`)) {
        avoid = instances[0];
        acked = await attempt(id, body, instances[0]!);
      } else if (first && random() < 0.25) {
        figures.concurrentDuplicatesSent++;
        const one = pick();
        const results = await Promise.all([attempt(id, body, one), attempt(id, body, pick(one))]);
        acked = results.some(Boolean);
      } else {
        acked = await attempt(id, body, pick());
      }
      first = false;
      if (acked) return;
      await sleep(20 + random() * 150);
    }
    figures.unacknowledged.push(id);
  }

  /** Waits for the victim's handler of the kill event to hang, kills the process, restarts it. */
  async function killMidHandler(victim: Instance, id: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (!victim.lines.includes(`HANG ${id}`) && Date.now() < deadline) await sleep(10);
    if (!victim.lines.includes(`HANG ${id}`))
      throw new Error(`the kill event's handler never ran on ${victim.name}`);
    killed = { file: `${victim.name}-${victim.child?.pid}.log`, at: Date.now() };
    await victim.kill();
    figures.kills++;
    writeFileSync(path.join(ledgerDir, `killed-${id}`), '');
    await sleep(300);
    await victim.start();
    avoid = undefined;
  }

  const started = Date.now();
  try {
    await Promise.all(instances.map((i) => i.start()));
    // The seed in every id: two proofs on one server (one handler, then three) share no event.
    const ids = Array.from({ length: events }, (_, n) =>
      n === Math.floor(events / 3) ? `kill-${n}-${seed}` : `evt-${n}-${seed}`,
    );
    const deadline = Date.now() + 150_000;
    let next = 0;
    const service = async () => {
      for (let n = next++; n < ids.length; n = next++) {
        const id = ids[n]!;
        if (id.startsWith('kill-')) {
          await Promise.all([deliverUntilAcked(id, deadline), killMidHandler(instances[0]!, id)]);
        } else {
          await deliverUntilAcked(id, deadline);
        }
      }
    };
    let playing = true;
    const chaos = async () => {
      // Round-robin from a seeded shuffle: every action runs, in an order the seed replays.
      const actions = [...(options.chaos ?? [])].sort(() => random() - 0.5);
      for (let n = 0; playing && actions.length > 0; n++) {
        await sleep(400 + random() * 600);
        if (!playing) break;
        const action = actions[n % actions.length]!;
        await action.run();
        figures.chaos[action.name] = (figures.chaos[action.name] ?? 0) + 1;
      }
    };
    const faults = chaos();
    await Promise.all(Array.from({ length: 16 }, service)).finally(() => void (playing = false));
    await faults;
    // Handlers that outran timeoutMs go on after their 503; give the last ones time to write.
    await sleep(1_500);
    const runs = successes();
    const unrecorded = new Set(instances.flatMap((i) => i.unrecorded));
    for (const key of ids.flatMap(keysOf)) {
      const ran = runs.get(key) ?? [];
      const n = ran.length;
      if (n === 1) continue;
      const why = whyTwice(key, ran);
      if (why === 'kill') figures.rerunAfterKill.push([key, n]);
      else if (why === 'give-up') figures.rerunAfterGiveUp.push([key, n]);
      else if (n > 1 && unrecorded.has(key)) figures.rerunUnrecorded.push([key, n]);
      else figures.notExactlyOnce.push([key, n]);
    }
    for (const [key] of figures.notExactlyOnce) {
      const [id, handler] = key.split('/') as [string, string | undefined];
      const storeKey = idempotencyKey('', source, id);
      const said = instances.flatMap((i) =>
        [...i.said].flatMap(([pid, { stored, refused, gaveUp }]) => {
          const who = `${i.name}-${pid}`;
          return [
            ...(stored.has(JSON.stringify([storeKey])) ? [`${who} stored the event`] : []),
            ...(handler !== undefined && stored.has(JSON.stringify([storeKey, handler]))
              ? [`${who} stored ${handler}`]
              : []),
            ...(refused.has(JSON.stringify([storeKey])) ? [`${who} was refused the event`] : []),
            ...(handler !== undefined && refused.has(JSON.stringify([storeKey, handler]))
              ? [`${who} was refused ${handler}`]
              : []),
            ...(gaveUp.has(id) ? [`${who} gave up`] : []),
            ...(killed?.file === `${who}.log` ? [`${who} was killed at +${killed.at - started}`] : []),
          ];
        }),
      );
      const logs = instances
        .flatMap((i) =>
          i.logs.flatMap(({ pid, line }) => {
            const [at, ...rest] = JSON.parse(line) as [number, ...unknown[]];
            return rest[1] === id
              ? [[`${i.name}-${pid}`, at - started, ...rest] as [string, number, ...unknown[]]]
              : [];
          }),
        )
        .sort((x, y) => x[1] - y[1]);
      const ran = (runs.get(key) ?? []).map((r) => `${r.file} +${r.at - started}`);
      figures.unexplained.push({ key, runs: ran, said, logs });
    }
  } finally {
    figures.seconds = Math.round((Date.now() - started) / 100) / 10;
    for (const instance of instances) {
      figures.markDoneGivenUp += instance.bookkeeping.filter((e) => e === 'mark-done-failed').length;
      figures.markDoneRecovered += instance.bookkeeping.filter((e) => e === 'mark-done-recovered').length;
    }
    await Promise.all(instances.map((i) => i.kill()));
    rmSync(ledgerDir, { recursive: true, force: true });
  }
  return figures;
}
