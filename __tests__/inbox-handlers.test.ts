// Behind both engines, each handler of an event is done once: a dead letter keeps each handler's
// state, deadLetters({ handler }) finds those where it failed, and replay(id, { handlers }) runs
// only the handlers named.
import { createEventRouter, MemoryStore, type HandlerContext, type Inbox } from '../lib';
import { describeEachEngine } from './support/describe-each-engine';
import { eventually } from './support/inbox-engines';
import { queuedIssued as queued } from './support/queued-issued';

let queues = 0;

describeEachEngine('per-handler delivery behind the inbox on $name', (_engine, server) => {
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of opened.reverse()) await o.close();
    opened.length = 0;
  });

  /** An inbox and a worker whose three handlers fail while `down` names them. */
  async function start(attempts: number) {
    const name = `handlers-${process.pid}-${++queues}`;
    const inbox = server().inbox(name);
    opened.push(inbox);
    const down = new Set<string>();
    /** Handlers that fail on their tries up to this number. */
    const flaky = new Map<string, number>();
    const runs: { handler: string; event: string; attempt: number }[] = [];
    const handler = (n: string) => (e: { id: string }, ctx: HandlerContext) => {
      runs.push({ handler: n, event: e.id, attempt: ctx.attempt });
      if (down.has(n) || ctx.attempt <= (flaky.get(n) ?? 0)) throw new Error(`${n} is down`);
    };
    const router = createEventRouter()
      .on('ag.access_pass.issued', handler('crm'), { name: 'crm' })
      .on('ag.access_pass.issued', handler('welcome-email'), { name: 'welcome-email' })
      .on('ag.access_pass.*', handler('audit'), { name: 'audit' });
    const worker = await inbox.startWorker(router, {
      attempts,
      backoff: { delayMs: 10, maxDelayMs: 10 },
      idempotency: new MemoryStore({ logger: false }),
      logger: false,
    });
    opened.push(worker);
    const ran = (h: string, event: string) => runs.filter((r) => r.handler === h && r.event === event);
    return { name, inbox, down, flaky, runs, ran };
  }

  async function deadLetterOf(inbox: Inbox, id: string) {
    await eventually(`${id} dead-lettered`, async () => (await inbox.deadLetters()).length > 0, 30_000);
    const [letter] = await inbox.deadLetters();
    expect(letter?.delivery.id).toBe(id);
    return letter!;
  }

  /** A worker of `attempts` tries whose handlers `failing` fail: event `id` enqueued, dead-lettered. */
  async function deadWith(id: string, failing: string[], attempts = 2) {
    const started = await start(attempts);
    for (const h of failing) started.down.add(h);
    await started.inbox.enqueue(queued(id));
    const letter = await deadLetterOf(started.inbox, id);
    return { ...started, letter };
  }

  /** Nothing left in the queue, its dead letters included. */
  async function empty(inbox: Inbox) {
    const s = await inbox.status();
    return s.waiting + s.delayed + s.active + s.dead === 0;
  }

  it('a job retried after one handler failed runs only that one; each of the others ran once', async () => {
    const { inbox, flaky, ran } = await start(5);
    flaky.set('welcome-email', 2);
    await inbox.enqueue(queued('evt-retry'));
    await eventually(
      'the job done',
      async () => ran('welcome-email', 'evt-retry').length === 3 && (await empty(inbox)),
      30_000,
    );
    expect(ran('crm', 'evt-retry').map((r) => r.attempt)).toEqual([1]);
    expect(ran('audit', 'evt-retry').map((r) => r.attempt)).toEqual([1]);
    expect(ran('welcome-email', 'evt-retry').map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect((await inbox.status()).dead).toBe(0);
  });

  it("a dead letter keeps each handler's state, and deadLetters({ handler }) finds it by the handler that failed", async () => {
    const { inbox, letter } = await deadWith('evt-dead', ['welcome-email']);
    expect(letter.handlers).toEqual({
      crm: { ok: true, attempts: 1 },
      audit: { ok: true, attempts: 1 },
      'welcome-email': { ok: false, attempts: 2, lastError: 'Error: welcome-email is down' },
    });
    expect((await inbox.deadLetters({ handler: 'welcome-email' })).map((d) => d.delivery.id)).toEqual([
      'evt-dead',
    ]);
    expect(await inbox.deadLetters({ handler: 'crm' })).toEqual([]);
    expect(await inbox.deadLetters({ handler: 'nobody' })).toEqual([]);
  });

  it('replay(id, { handlers }) runs only the named handlers; the job completes once every other had succeeded', async () => {
    const { inbox, down, ran } = await deadWith('evt-named', ['welcome-email', 'audit']);
    down.clear();
    expect(await inbox.replay('evt-named', { handlers: ['welcome-email'] })).toBe(1);
    // audit, not named, does not run: the job goes back to the dead letters, saying audit is left.
    await eventually(
      'dead again',
      async () => {
        const s = await inbox.status();
        return ran('welcome-email', 'evt-named').length === 3 && s.dead === 1 && s.active === 0;
      },
      30_000,
    );
    expect(ran('audit', 'evt-named')).toHaveLength(2);
    const [letter] = await inbox.deadLetters();
    expect(letter?.lastError).toMatch(/audit still has no recorded success/);
    expect(letter?.handlers?.['welcome-email']).toEqual({ ok: true, attempts: 3 });
    expect(await inbox.replay('evt-named', { handlers: ['audit'] })).toBe(1);
    await eventually(
      'the job done',
      async () => ran('audit', 'evt-named').length === 3 && (await empty(inbox)),
      30_000,
    );
    expect(ran('audit', 'evt-named').map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(ran('welcome-email', 'evt-named')).toHaveLength(3);
    expect(ran('crm', 'evt-named')).toHaveLength(1);
  });

  it('a plain replay runs only the handlers not yet done', async () => {
    const { inbox, down, ran } = await deadWith('evt-plain', ['welcome-email', 'audit']);
    down.clear();
    expect(await inbox.replay('evt-plain')).toBe(1);
    await eventually(
      'the job done',
      async () => ran('audit', 'evt-plain').length === 3 && (await empty(inbox)),
      30_000,
    );
    expect(ran('crm', 'evt-plain')).toHaveLength(1);
    expect(ran('welcome-email', 'evt-plain')).toHaveLength(3);
  });

  it('naming a handler that succeeded runs it again; with another still failing, the job goes back to the dead letters saying so', async () => {
    const { inbox, ran } = await deadWith('evt-again', ['welcome-email']);
    expect(await inbox.replay('evt-again', { handlers: ['crm'] })).toBe(1);
    await eventually('crm ran again', () => ran('crm', 'evt-again').length === 2, 30_000);
    await eventually(
      'dead again',
      async () => (await inbox.status()).dead === 1 && (await inbox.status()).active === 0,
      30_000,
    );
    const [letter] = await inbox.deadLetters();
    expect(letter?.lastError).toMatch(/welcome-email still has no recorded success/);
    expect(letter?.handlers?.crm).toEqual({ ok: true, attempts: 2 });
    expect(letter?.handlers?.['welcome-email']).toMatchObject({ ok: false, attempts: 2 });
    // welcome-email did not run in the replay that did not name it.
    expect(ran('welcome-email', 'evt-again')).toHaveLength(2);
  });

  it('an unknown handler name is refused, nothing replayed: a "did you mean" from the worker\'s router, else an exact match of the recorded names', async () => {
    const { name, inbox } = await deadWith('evt-typo', ['audit'], 1);
    await expect(inbox.replay('evt-typo', { handlers: ['welcome-emial'] })).rejects.toThrow(
      "[service-webhooks] inbox.replay: the dead letter of evt-typo has no handler named 'welcome-emial' (did you mean 'welcome-email'?); its handlers: audit, crm, welcome-email",
    );
    // Another process's inbox on the queue, with no worker here: only the names the letter recorded.
    const reader = server().inbox(name);
    opened.push(reader);
    await expect(reader.replay('evt-typo', { handlers: ['Audit'] })).rejects.toThrow(
      "has no handler named 'Audit' (did you mean 'audit'?)",
    );
    expect((await inbox.status()).dead).toBe(1);
  });
});
