import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { DeadLetter, Inbox } from '../../../lib';
import { buildEvent, DELIVERY_HEADERS } from '../../../lib/testing';
import { seeded } from '../seeded';
import { freePort } from '../server-binary';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A receiver or worker process, restartable, that reports `HANG <id>` when it should be killed. */
class Proc {
  child: ChildProcess | undefined;
  hung: string[] = [];
  stderr = '';
  constructor(
    readonly name: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}
  async start(): Promise<void> {
    const child = spawn(process.execPath, [path.join(__dirname, 'node.js')], {
      env: { ...this.env, NAME: this.name },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    let ready = false;
    child.stderr?.on('data', (d: Buffer) => void (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    // Whole lines, never a chunk's split ones: a `HANG` line cut in two would never be seen.
    createInterface({ input: child.stdout!, crlfDelay: Infinity }).on('line', (line: string) => {
      if (line === `READY ${this.name}`) ready = true;
      if (line.startsWith('HANG ')) this.hung.push(line.slice(5));
    });
    const deadline = Date.now() + 30_000;
    while (!ready) {
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`${this.name} did not start: ${this.stderr}`);
      await sleep(20);
    }
  }
  /** SIGKILLs the process if it runs; the pid it killed, else undefined. */
  async kill(): Promise<number | undefined> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null) return undefined;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    return child.pid;
  }
}

/** The worker's handlers (inbox-kill/node.js), each with its own effect per event. */
const HANDLERS = ['crm', 'email', 'audit'] as const;

export interface KillProofFigures {
  engine: string;
  seed: number;
  events: number;
  redelivered: number;
  deliveries: number;
  answers: Record<string, number>;
  /** SIGKILLs sent, by role: at least one per fault point, more when a retry reached a process first. */
  kills: { receiver: number; worker: number };
  /** The fault points a process was killed at (each once): every one of them, or the proof proved nothing. */
  killedAt: string[];
  /** Events each of whose three handlers' effects happened exactly once. */
  handledOnce: number;
  deadLetters: number;
  /** Events neither handled (all three handlers) nor dead: must be none. */
  lost: string[];
  /**
   * Handlers (`<event>/<handler>`) whose effect happened more than once, not counting the runs
   * excused in `rerunAfterKill`: must be none.
   */
  twice: string[];
  /**
   * Handlers whose effect happened in a worker the killer SIGKILLed, which never saw the store record
   * that success (an effect line in its `effects-<pid>.log`, none in its `recorded-<pid>.log`): the kill
   * fell between the effect and the store's answer, so a retry rightly runs the handler again (each
   * such run is not counted as twice; nearly always the handler did run again). Every excuse needs a
   * kill: at most concurrency (8) jobs of 3 handlers each per killed worker.
   */
  rerunAfterKill: string[];
  /**
   * Dead letters whose handler states disagree with the effects (a handler said ok without its
   * effect once, or failed with one): must be none.
   */
  deadStateWrong: string[];
  /** Dead letters without a reason: must be none. */
  deadWithoutReason: string[];
  seconds: number;
}

/**
 * Plays the Service against 2 receiver processes and 2 worker processes on one engine: every event
 * sent until answered 200, 10% of them sent again after that, handlers failing at random and taking
 * up to 2 s; a worker SIGKILLed mid-job and a receiver SIGKILLed mid-enqueue (twice: before and after
 * the queue heard), each restarted. Each event runs three named handlers, each with its own effect;
 * the worker is killed on one event after its first handler's success reached the store. Then every
 * handler's effect happened once per event, or the event sits in the dead letters, each handler's
 * state there saying whether its effect happened.
 */
export async function runKillProof(options: {
  engine: 'bullmq' | 'pg-boss';
  url: string;
  env: NodeJS.ProcessEnv;
  inbox: (queue: string) => Inbox;
  events?: number;
  seed?: number;
}): Promise<KillProofFigures> {
  const { engine, events = 500, seed = Date.now() % 1_000_000 } = options;
  const started = Date.now();
  const random = seeded(seed);
  const dir = mkdtempSync(path.join(tmpdir(), 'sw-inbox-kill-'));
  const queue = `kill-${engine}-${seed}`;
  const base = {
    ...options.env,
    ENGINE: engine,
    URL: options.url,
    LEDGER_DIR: dir,
    SEED: String(seed),
    QUEUE: queue,
    FAIL_RATE: '0.3',
  };
  const receivers = await Promise.all(['r1', 'r2'].map(async (name) => ({ port: await freePort(), name })));
  const procs = [
    ...receivers.map((r) => new Proc(r.name, { ...base, ROLE: 'receiver', PORT: String(r.port) })),
    ...['w1', 'w2'].map((name) => new Proc(name, { ...base, ROLE: 'worker' })),
  ];
  const figures: KillProofFigures = {
    engine,
    seed,
    events,
    redelivered: 0,
    deliveries: 0,
    answers: {},
    kills: { receiver: 0, worker: 0 },
    killedAt: [],
    handledOnce: 0,
    deadLetters: 0,
    lost: [],
    twice: [],
    rerunAfterKill: [],
    deadStateWrong: [],
    deadWithoutReason: [],
    seconds: 0,
  };
  const inbox = options.inbox(queue);
  try {
    await Promise.all(procs.map((p) => p.start()));
    // The killer: a process that says HANG is killed and restarted, once per marker.
    let watching = true;
    /** The pids the killer SIGKILLed while they ran: only their unrecorded effects are excused. */
    const killedPids = new Set<number>();
    const killer = (async () => {
      while (watching) {
        for (const p of procs) {
          const id = p.hung.shift();
          if (id === undefined) continue;
          const who = p.name.startsWith('r') ? 'r' : 'w';
          writeFileSync(path.join(dir, `killed-${who}-${id}`), '');
          const pid = await p.kill();
          if (pid !== undefined) killedPids.add(pid);
          figures.kills[who === 'r' ? 'receiver' : 'worker']++;
          if (!figures.killedAt.includes(id)) figures.killedAt.push(id);
          await p.start();
        }
        await sleep(20);
      }
    })();

    const ids = Array.from({ length: events }, (_, i) => `evt_${seed}_${i}`);
    ids.splice(17, 1, 'kill-worker');
    ids.splice(40, 1, 'kill-before-enqueue');
    ids.splice(90, 1, 'kill-after-enqueue');
    const bodies = new Map(
      ids.map((id) => [id, JSON.stringify(buildEvent('ag.hid_org.created', {}, { id }))]),
    );
    /** One delivery as the Service makes it: retried until 200, for at most 60 s. */
    const deliver = async (id: string) => {
      const deadline = Date.now() + 60_000;
      for (let attempt = 1; Date.now() < deadline; attempt++) {
        const target = receivers[Math.floor(random() * receivers.length)] ?? receivers[0]!;
        figures.deliveries++;
        let key: string;
        try {
          const res = await fetch(`http://127.0.0.1:${target.port}/`, {
            method: 'POST',
            headers: {
              ...DELIVERY_HEADERS,
              authorization: 'Bearer tok_kill',
              'x-service-webhook-attempt': String(attempt),
            },
            body: bodies.get(id),
            signal: AbortSignal.timeout(5_000),
          });
          const text = await res.text();
          key =
            res.status === 200
              ? `200 ${(JSON.parse(text) as { status: string }).status}`
              : String(res.status);
          if (res.status === 200) {
            figures.answers[key] = (figures.answers[key] ?? 0) + 1;
            return;
          }
        } catch {
          key = 'no answer';
        }
        figures.answers[key] = (figures.answers[key] ?? 0) + 1;
        await sleep(100 + Math.floor(random() * 200));
      }
      throw new Error(`${id} was never acknowledged`);
    };
    // 16 deliveries in flight, as a busy sender's would be.
    const pending = [...ids];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let id = pending.shift(); id !== undefined; id = pending.shift()) {
          await deliver(id);
          if (random() < 0.1) {
            figures.redelivered++;
            await deliver(id);
          }
        }
      }),
    );
    // Until every event is settled (each handler's effect happened, or it is dead) and the queue is
    // empty: bounded.
    const handled = (counts: Map<string, number>) =>
      ids.filter((id) => HANDLERS.every((h) => counts.has(`${id}/${h}`)));
    /** The lines of each `<prefix><pid>.log`, counted by line, by pid. */
    const ledgers = (prefix: 'effects-' | 'recorded-') => {
      const byPid = new Map<number, Map<string, number>>();
      for (const file of readdirSync(dir).filter((f) => f.startsWith(prefix))) {
        const lines = new Map<string, number>();
        for (const line of readFileSync(path.join(dir, file), 'utf8').split('\n').filter(Boolean))
          lines.set(line, (lines.get(line) ?? 0) + 1);
        byPid.set(Number(file.slice(prefix.length, -'.log'.length)), lines);
      }
      return byPid;
    };
    const effects = () => {
      const counts = new Map<string, number>();
      for (const lines of ledgers('effects-').values())
        for (const [line, n] of lines) counts.set(line, (counts.get(line) ?? 0) + n);
      return counts;
    };
    let dead: DeadLetter[] = [];
    const deadline = Date.now() + 120_000;
    for (;;) {
      const status = await inbox.status();
      dead = await inbox.deadLetters({ limit: events });
      const settled = handled(effects()).length + dead.length;
      if ((status.waiting === 0 && status.active === 0 && settled >= events) || Date.now() > deadline) break;
      await sleep(250);
    }
    watching = false;
    await killer;
    const counts = effects();
    const recorded = ledgers('recorded-');
    const known = new Set(ids.flatMap((id) => HANDLERS.map((h) => `${id}/${h}`)));
    // A record that names no handler of ours (a key the worker could not read) would excuse effects
    // it should not: the run proves nothing then.
    for (const lines of recorded.values())
      for (const line of lines.keys())
        if (!known.has(line)) throw new Error(`a worker recorded a success of no known handler: ${line}`);
    /** By handler: its effect lines in killed workers' ledgers beyond what those workers recorded. */
    const excused = new Map<string, number>();
    for (const [pid, lines] of ledgers('effects-')) {
      if (!killedPids.has(pid)) continue;
      for (const [line, n] of lines) {
        const unrecorded = n - (recorded.get(pid)?.get(line) ?? 0);
        if (unrecorded > 0) excused.set(line, (excused.get(line) ?? 0) + unrecorded);
      }
    }
    /** The runs of a handler not excused by a kill. */
    const counted = (key: string) => (counts.get(key) ?? 0) - (excused.get(key) ?? 0);
    /** Its effect happened, and at most once but for runs a kill excuses. */
    const once = (key: string) => counts.has(key) && counted(key) <= 1;
    const deadIds = new Set(dead.map((d) => d.delivery.id));
    const done = new Set(handled(counts));
    // A dead event is counted among the dead letters only, though its effects may all have happened
    // (one in a killed worker, unrecorded, its retries failing).
    figures.handledOnce = ids.filter(
      (id) => !deadIds.has(id) && HANDLERS.every((h) => once(`${id}/${h}`)),
    ).length;
    figures.twice = [...counts.keys()].filter((key) => counted(key) > 1);
    figures.rerunAfterKill = [...excused.keys()];
    figures.deadLetters = dead.length;
    figures.lost = ids.filter((id) => !done.has(id) && !deadIds.has(id));
    // A handler's state is wrong when it says ok with no effect (or one twice), or failed with an
    // effect a kill does not excuse. Failed with its one effect in a killed worker, unrecorded, is
    // right: no store or queue heard of that success, and its retries failed.
    figures.deadStateWrong = dead
      .filter((d) =>
        HANDLERS.some((h) => {
          const key = `${d.delivery.id}/${h}`;
          return d.handlers?.[h]?.ok === true ? !once(key) : counted(key) > 0;
        }),
      )
      .map((d) => d.delivery.id);
    figures.deadWithoutReason = dead.filter((d) => !d.lastError || d.attempts < 1).map((d) => d.delivery.id);
    figures.seconds = Math.round((Date.now() - started) / 1000);
    return figures;
  } finally {
    await Promise.allSettled(procs.map((p) => p.kill()));
    await inbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
