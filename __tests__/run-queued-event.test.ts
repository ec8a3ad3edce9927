// Behind the inbox, each handler of an event runs until it succeeds, then never again for that event.
import { createEventRouter, MemoryStore, type HandlerContext, type JobRecord } from '../lib';
import { inboxWorkerCore, type JobDisposition } from '../lib/inbox/worker/inbox-worker-core';
import { handledKey } from '../lib/inbox/worker/run-queued-event';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { queuedDelivery, type JobHandlers } from '../lib/inbox/queued-delivery';
import { normalizeEvent } from '../lib/events/normalize-event';
import { openTelemetryTracing } from '../lib/observability/open-telemetry-tracing';
import { buildEvent } from '../lib/testing';

function queued(id: string) {
  const envelope = buildEvent('ag.access_pass.issued', {}, { id });
  const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
  return queuedDelivery(idempotencyKey('', event.source, id), event, () => undefined, null);
}

/** Three named handlers; `failing` decides, per handler and its try, whether it throws. */
function threeHandlers(failing: (handler: string, attempt: number) => boolean) {
  const runs: { handler: string; attempt: number; ctxHandler: string }[] = [];
  const handler = (name: string) => (_e: unknown, ctx: HandlerContext) => {
    runs.push({ handler: name, attempt: ctx.attempt, ctxHandler: ctx.handler });
    if (failing(name, ctx.attempt)) throw new Error(`${name} is down`);
  };
  const router = createEventRouter()
    .on('ag.access_pass.issued', handler('crm'), { name: 'crm' })
    .on('ag.access_pass.issued', handler('welcome-email'), { name: 'welcome-email' })
    .on('ag.access_pass.*', handler('audit'), { name: 'audit' });
  return { router, runs };
}

/** Runs a job's tries as an engine does: the states each try gives back go into the next. */
async function tries(
  core: ReturnType<typeof inboxWorkerCore>,
  id: string,
  count: number,
  start: JobHandlers = {},
): Promise<{ dispositions: JobDisposition[]; job: JobHandlers }> {
  const d = queued(id);
  let job = start;
  const dispositions: JobDisposition[] = [];
  for (let attempt = 1; attempt <= count; attempt++) {
    const next = await core.run(d, attempt, job);
    dispositions.push(next);
    if (next.handlers !== undefined) job = { ...job, handlers: next.handlers };
    if (next.then === 'complete' || next.then === 'dead') break;
  }
  return { dispositions, job };
}

const core = (router: ReturnType<typeof createEventRouter>, options: object = {}) =>
  inboxWorkerCore(
    router,
    { attempts: 5, backoff: { delayMs: 10 }, logger: false, ...options },
    'w',
    openTelemetryTracing,
  );

describe('behind the inbox, a job runs only the handlers without a recorded success', () => {
  it.each([
    { store: 'a MemoryStore', idempotency: () => new MemoryStore({ logger: false }) },
    { store: 'no store (the job state alone)', idempotency: () => false as const },
  ])(
    'the next try after one of three failed runs only that one, and the event is done when it succeeds ($store)',
    async ({ idempotency }) => {
      const { router, runs } = threeHandlers((h, attempt) => h === 'welcome-email' && attempt < 3);
      const { dispositions, job } = await tries(core(router, { idempotency: idempotency() }), 'evt-1', 5);
      expect(dispositions.map((d) => d.then)).toEqual(['retry', 'retry', 'complete']);
      expect(
        runs
          .filter((r) => r.handler !== 'welcome-email')
          .map((r) => r.handler)
          .sort(),
      ).toEqual(['audit', 'crm']);
      expect(runs.filter((r) => r.handler === 'welcome-email').map((r) => r.attempt)).toEqual([1, 2, 3]);
      for (const r of runs) expect(r.ctxHandler).toBe(r.handler);
      expect(job.handlers).toEqual({
        crm: { ok: true, attempts: 1 },
        audit: { ok: true, attempts: 1 },
        'welcome-email': { ok: false, attempts: 2, lastError: 'Error: welcome-email is down' },
      });
    },
  );

  it("a worker killed after a handler's success was recorded does not rerun it (the store says so, the job's data does not)", async () => {
    const store = new MemoryStore({ logger: false });
    const { router, runs } = threeHandlers((h) => h === 'welcome-email');
    const c = core(router, { idempotency: store });
    // Try 1: crm and audit succeed and are recorded in the store; welcome-email fails. The engine
    // then never hears of it (the worker died): the job's data holds no state for its next try.
    await c.run(queued('evt-kill'), 1, {});
    expect(runs.map((r) => r.handler).sort()).toEqual(['audit', 'crm', 'welcome-email']);
    runs.length = 0;
    const next = await c.run(queued('evt-kill'), 2, {});
    expect(runs.map((r) => r.handler)).toEqual(['welcome-email']);
    expect(next.then).toBe('retry');
    // The states kept say what the store knew: crm and audit done.
    expect(next.handlers?.crm).toEqual({ ok: true, attempts: 0 });
    expect(next.handlers?.audit).toEqual({ ok: true, attempts: 0 });
    // Not acknowledged: the event is not done in the ledger while welcome-email has not succeeded.
    expect(await store.get(handledKey(queued('evt-kill').key))).toBeNull();
  });

  it("a failure's try is not acknowledged: a job retried or dead-lettered leaves the event not done", async () => {
    const store = new MemoryStore({ logger: false });
    const { router } = threeHandlers((h) => h === 'crm');
    const { dispositions } = await tries(core(router, { idempotency: store, attempts: 2 }), 'evt-dead', 5);
    expect(dispositions.map((d) => d.then)).toEqual(['retry', 'dead']);
    expect(dispositions[1]?.handlers).toEqual({
      crm: { ok: false, attempts: 2, lastError: 'Error: crm is down' },
      'welcome-email': { ok: true, attempts: 1 },
      audit: { ok: true, attempts: 1 },
    });
    expect(await store.get(handledKey(queued('evt-dead').key))).toBeNull();
  });

  it("onJob's record of each try names the handlers it ran, with their outcome and their own try number", async () => {
    const records: JobRecord[] = [];
    const { router } = threeHandlers((h, attempt) => h === 'audit' && attempt === 1);
    await tries(core(router, { idempotency: false, onJob: (r: JobRecord) => records.push(r) }), 'evt-rec', 5);
    expect(records.map((r) => [r.outcome, r.handlers])).toEqual([
      [
        'retry',
        {
          crm: { ok: true, attempt: 1 },
          'welcome-email': { ok: true, attempt: 1 },
          audit: { ok: false, attempt: 1, error: 'Error: audit is down' },
        },
      ],
      ['processed', { audit: { ok: true, attempt: 2 } }],
    ]);
  });
});

describe('behind the inbox, ordered handlers compose with per-handler success', () => {
  function updated(id: string, time: string) {
    const envelope = buildEvent('ag.access_pass.updated', { id: 'pass-1' }, { id, time });
    const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
    return queuedDelivery(idempotencyKey('', event.source, id), event, () => undefined, null);
  }

  it("an ordered handler that succeeded is not rerun, and its entity's mark advances once the rest succeed: an older event is then stale", async () => {
    const runs: string[] = [];
    let crmDown = true;
    const router = createEventRouter()
      .on('ag.access_pass.updated', (e: { id: string }) => void runs.push(`mirror:${e.id}`), {
        name: 'mirror',
        ordering: 'newest-wins',
      })
      .on(
        'ag.access_pass.updated',
        (e: { id: string }) => {
          runs.push(`crm:${e.id}`);
          if (crmDown) throw new Error('crm is down');
        },
        { name: 'crm' },
      );
    const c = core(router, { idempotency: new MemoryStore({ logger: false }) });
    const first = await c.run(updated('newer', '2026-01-01T10:00:02Z'), 1, {});
    expect(first.then).toBe('retry');
    crmDown = false;
    const second = await c.run(updated('newer', '2026-01-01T10:00:02Z'), 2, { handlers: first.handlers! });
    expect(second).toEqual({ then: 'complete', status: 'processed' });
    expect(runs).toEqual(['mirror:newer', 'crm:newer', 'crm:newer']);
    // The entity's mark advanced with the second try: an older event's ordered handler is skipped.
    runs.length = 0;
    expect(await c.run(updated('older', '2026-01-01T10:00:01Z'), 1, {})).toEqual({
      then: 'complete',
      status: 'processed',
    });
    expect(runs).toEqual(['crm:older']);
  });
});
