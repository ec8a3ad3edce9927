import { spawn } from 'node:child_process';
import path from 'node:path';
import { Queue } from 'bullmq';
import { createEventRouter, type EventRouter, type Inbox, type InboxWorkerOptions } from '../lib';
import { bullmqInbox } from '../lib/bullmq';
import { redisConnection } from '../lib/bullmq/redis-connection';
import { normalizeEvent } from '../lib/events/normalize-event';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { jobIdFor, queuedDelivery } from '../lib/inbox/queued-delivery';
import { buildEvent } from '../lib/testing';
import { builtPackage } from './support/built-package';
import { captureLogger } from './support/capture-logger';
import { eventually } from './support/inbox-engines';
import { describeWithRedis, startRedisServer, type RedisServer } from './support/redis-server';

function deliveryOf(id: string) {
  const envelope = buildEvent('ag.access_pass.issued', {}, { id });
  const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
  return queuedDelivery(idempotencyKey('', event.source, id), event, () => undefined, null);
}

/** The job as BullMQ itself (and so bull-board or Taskforce) reads it. */
async function jobOf(url: string, name: string, id: string) {
  const queue = new Queue(name, { connection: redisConnection(url) });
  try {
    const job = await queue.getJob(jobIdFor(deliveryOf(id).key));
    if (job === undefined) throw new Error(`no job for ${id}`);
    return { job, state: await job.getState() };
  } finally {
    await queue.close();
  }
}

/** Runs `id` through a worker on `inbox` (closed after) until it is dead-lettered; its job as BullMQ reads it. */
async function runToDeadLetter(
  inbox: Inbox,
  url: string,
  router: EventRouter,
  options: InboxWorkerOptions,
  id: string,
) {
  const worker = await inbox.startWorker(router, {
    backoff: { delayMs: 10 },
    idempotency: false,
    logger: false,
    ...options,
  });
  try {
    await inbox.enqueue(deliveryOf(id));
    await eventually('its dead letter', async () => (await inbox.status()).dead === 1, 10_000);
    return await jobOf(url, inbox.name, id);
  } finally {
    await worker.close();
  }
}

describeWithRedis('the BullMQ worker', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  }, 30_000);
  afterAll(() => server?.close());

  it("lets BullMQ count the tries: the job's attempts, attemptsMade and failed state say what happened", async () => {
    const name = `counted-${process.pid}`;
    const inbox = bullmqInbox({ connection: server.url, name, attempts: 3, logger: false });
    let runs = 0;
    const router = createEventRouter().onAny(() => {
      runs++;
      throw new Error('the CRM is down');
    });
    try {
      // The worker's attempts default to the inbox's.
      const { job, state } = await runToDeadLetter(inbox, server.url, router, {}, 'evt_counted');
      expect({
        state,
        attempts: job.opts.attempts,
        attemptsMade: job.attemptsMade,
        failedReason: job.failedReason,
        runs,
      }).toEqual({
        state: 'failed',
        attempts: 3,
        attemptsMade: 3,
        failedReason: 'Error: the CRM is down',
        runs: 3,
      });
      expect((await inbox.deadLetters()).map((d) => [d.delivery.id, d.attempts])).toEqual([
        ['evt_counted', 3],
      ]);
    } finally {
      await inbox.close();
    }
  }, 30_000);

  it("keeps its dead letters and its redelivery guard on an app's own Queue whose defaultJobOptions remove jobs", async () => {
    // BullMQ merges a queue's defaultJobOptions into every add: a retention the job names itself wins,
    // one it leaves unset would be the app's, here "remove at once".
    const name = `app-defaults-${process.pid}`;
    const queue = new Queue(name, {
      connection: redisConnection(server.url),
      defaultJobOptions: { removeOnComplete: true, removeOnFail: true },
    });
    const inbox = bullmqInbox({ queue, attempts: 1, logger: false });
    const runs: string[] = [];
    const router = createEventRouter().onAny((event) => {
      runs.push(event.id);
      if (event.id === 'evt_app_bad') throw new Error('the CRM is down');
    });
    const worker = await inbox.startWorker(router, {
      backoff: { delayMs: 10 },
      idempotency: false,
      logger: false,
    });
    try {
      await inbox.enqueue(deliveryOf('evt_app_ok'));
      await eventually('its run', async () => runs.length === 1, 10_000);
      await eventually('its job completed', async () => {
        const job = await queue.getJob(jobIdFor(deliveryOf('evt_app_ok').key));
        return (await job?.getState()) === 'completed';
      });
      // The Service's redelivery of the same event: the completed job is its guard.
      await inbox.enqueue(deliveryOf('evt_app_ok'));
      await inbox.enqueue(deliveryOf('evt_app_bad'));
      await eventually('its dead letter', async () => (await inbox.status()).dead === 1, 10_000);
      expect({ runs, failed: await queue.getFailedCount() }).toEqual({
        runs: ['evt_app_ok', 'evt_app_bad'],
        failed: 1,
      });
    } finally {
      await worker.close();
      await inbox.close();
      await queue.obliterate({ force: true });
      await queue.close();
    }
  }, 30_000);

  it('keeps a completed job 7 hours by its worker: jobs of its own queue name no retention of their own', async () => {
    // Redis writes a job's options as JSON on every add: the retention is the worker's to say.
    const name = `kept-${process.pid}`;
    const inbox = bullmqInbox({ connection: server.url, name, attempts: 1, logger: false });
    const queue = new Queue(name, { connection: redisConnection(server.url) });
    const runs: string[] = [];
    const worker = await inbox.startWorker(
      createEventRouter().onAny((event) => {
        runs.push(event.id);
        if (event.id.startsWith('evt_kept_bad')) throw new Error('the CRM is down');
      }),
      { idempotency: false, logger: false },
    );
    const hour = 60 * 60 * 1000;
    const realNow = Date.now.bind(Date);
    let ahead = 0;
    // BullMQ trims the completed set by the finishing worker's Date.now() against each job's finishedOn.
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + ahead);
    const completed = async (id: string) => {
      await inbox.enqueue(deliveryOf(id));
      await eventually(`${id} completed`, async () => {
        const job = await queue.getJob(jobIdFor(deliveryOf(id).key));
        return (await job?.getState()) === 'completed';
      });
    };
    const kept = async (id: string) => (await queue.getJob(jobIdFor(deliveryOf(id).key))) !== undefined;
    try {
      await completed('evt_kept_first');
      const { opts } = (await queue.getJob(jobIdFor(deliveryOf('evt_kept_first').key)))!;
      expect({ removeOnComplete: opts.removeOnComplete, removeOnFail: opts.removeOnFail }).toEqual({
        removeOnComplete: undefined,
        removeOnFail: undefined,
      });
      // The Service's redelivery within its retries: the completed job is its guard.
      await inbox.enqueue(deliveryOf('evt_kept_first'));
      // A dead letter at +0, which no retention of any age or count of one may take at +8 h.
      await inbox.enqueue(deliveryOf('evt_kept_bad_early'));
      await eventually('the first dead letter', async () => (await inbox.status()).dead === 1, 10_000);
      ahead = 6 * hour;
      await completed('evt_kept_second');
      const afterSix = await kept('evt_kept_first');
      ahead = 8 * hour;
      await completed('evt_kept_third');
      await inbox.enqueue(deliveryOf('evt_kept_bad'));
      await eventually('its dead letter', async () => (await inbox.status()).dead === 2, 10_000);
      expect({
        runs,
        afterSix,
        afterEight: await kept('evt_kept_first'),
        second: await kept('evt_kept_second'),
        failed: await queue.getFailedCount(),
      }).toEqual({
        runs: ['evt_kept_first', 'evt_kept_bad_early', 'evt_kept_second', 'evt_kept_third', 'evt_kept_bad'],
        afterSix: true,
        afterEight: false,
        second: true,
        failed: 2,
      });
    } finally {
      clock.mockRestore();
      await worker.close();
      await inbox.close();
      await queue.obliterate({ force: true });
      await queue.close();
    }
  }, 30_000);

  it('dead-letters at the worker’s own attempts when they are fewer than the job’s, and refuses more', async () => {
    const name = `fewer-${process.pid}`;
    const inbox = bullmqInbox({ connection: server.url, name, logger: false });
    const router = createEventRouter().onAny(() => {
      throw new Error('down');
    });
    await expect(inbox.startWorker(router, { attempts: 14, logger: false })).rejects.toThrow(
      /\[service-webhooks\] inbox\.startWorker: attempts 14 is more than the 13 this inbox gives each job it enqueues .*give bullmqInbox\(\{ attempts: 14 \}\)/,
    );
    try {
      const { job, state } = await runToDeadLetter(inbox, server.url, router, { attempts: 2 }, 'evt_fewer');
      expect({ state, attempts: job.opts.attempts, attemptsMade: job.attemptsMade }).toEqual({
        state: 'failed',
        attempts: 13,
        attemptsMade: 2,
      });
    } finally {
      await inbox.close();
    }
  }, 30_000);

  it('dead-letters a job that kills its worker after maxStalledCount (2) stops, not after its attempts', async () => {
    const { env, bin } = await builtPackage();
    const name = `stalls-${process.pid}`;
    const inbox = bullmqInbox({ connection: server.url, name, logger: false });
    const output: string[] = [];
    const said =
      'LOG [service-webhooks] a queued event stopped its worker mid-try too many times; it is kept in the dead letters until replayed';
    try {
      await inbox.enqueue(deliveryOf('evt_killer'));
      const failed = async () => (await jobOf(server.url, name, 'evt_killer')).state === 'failed';
      // One worker process after another, each killed by the job, until BullMQ fails it: bounded.
      for (let started = 0; started < 5 && !(await failed()); started++) {
        const child = spawn(
          process.execPath,
          [path.join(__dirname, 'support', 'bullmq-stall', 'worker.js')],
          {
            env: {
              ...env,
              SW_PKG: path.resolve(bin, '..', '..', '..'),
              URL: server.url,
              QUEUE: name,
            },
            stdio: ['ignore', 'pipe', 'inherit'],
          },
        );
        child.stdout.on('data', (data: Buffer) => output.push(...data.toString().trim().split('\n')));
        // 'close', not 'exit': every line the worker wrote before it died is read by then.
        const closed = new Promise((resolve) => child.once('close', resolve));
        const ended = () => child.exitCode !== null || child.signalCode !== null;
        try {
          await eventually(
            'the worker killed or the job failed',
            async () => ended() || (await failed()),
            30_000,
          );
          // BullMQ fails the job in Redis before its worker hears of it and logs: on a busy machine
          // the state can be read here first. The worker gets a bound to say so instead of being cut
          // short; past it, the expectations below show what it wrote.
          await eventually(
            'the worker killed or its dead letter logged',
            () => ended() || output.includes(said),
            15_000,
          ).catch(() => undefined);
        } finally {
          if (!ended()) child.kill('SIGKILL');
          await closed;
        }
      }
      const { job, state } = await jobOf(server.url, name, 'evt_killer');
      expect({ state, failedReason: job.failedReason }).toEqual({
        state: 'failed',
        failedReason: 'job stalled more than allowable limit',
      });
      // Three tries started, each killing its worker; the fourth worker failed it without running it.
      expect(output.filter((line) => line === 'RUN')).toHaveLength(3);
      expect(output).toContain(said);
      expect((await inbox.deadLetters()).map((d) => [d.delivery.id, d.lastError])).toEqual([
        ['evt_killer', 'job stalled more than allowable limit'],
      ]);
    } finally {
      await inbox.close();
    }
  }, 180_000);

  // Last: it stops and restarts the server.
  it('logs the first error of each reason, counts the rest, and says once when it is connected again', async () => {
    const inbox = bullmqInbox({ connection: server.url, name: `away-${process.pid}`, logger: false });
    const logger = captureLogger();
    const worker = await inbox.startWorker(createEventRouter(), { idempotency: false, logger });
    const errors = () => logger.records.filter((r) => r.level === 'error');
    try {
      await server.stop();
      await eventually('a first error line', () => errors().length > 0, 15_000);
      // Redis stays away a while: BullMQ reports a failed reconnection about twice a second.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      await server.start();
      await eventually('the connection back', () => logger.messages('warn').length > 0, 15_000);
      const reasons = errors().map((r) => r.meta.reason);
      // One line per reason, each the first of its kind.
      expect(new Set(reasons).size).toBe(reasons.length);
      for (const line of errors()) {
        expect(line.message).toMatch(
          /^\[service-webhooks\] the BullMQ worker reported an error and keeps retrying/,
        );
        expect(line.meta.suppressedSinceLast).toBeUndefined();
      }
      const back = logger.records.filter((r) => r.level === 'warn');
      expect(back.map((r) => r.message)).toEqual(['[service-webhooks] the BullMQ worker is connected again']);
      // The held-back errors are counted in it: more than were logged.
      expect(back[0]?.meta.errors).toBeGreaterThan(reasons.length);
      // Both connections ready again, and no second line for it.
      await inbox.enqueue(deliveryOf('evt_after'));
      await eventually('the queue ran again', async () => (await inbox.status()).waiting === 0, 15_000);
      expect(logger.messages('warn')).toHaveLength(1);
    } finally {
      await worker.close();
      await inbox.close();
    }
  }, 60_000);
});
