import type { ConnectionOptions, Job, Queue, Worker } from 'bullmq';
import { jobIdFor, type QueuedDelivery } from '../inbox/queued-delivery';
import { unreadableError } from '../inbox/worker/read-queued-event';
import { tallyJob } from './bullmq-issues';
import { loadBullmq } from './load-bullmq';
import { redisIssueTally, type IssueTallyStore, type TallyClient } from './redis-issue-tally';
import { workerConnection } from './redis-connection';

/** The quarantine queue's name beside queue `name`'s. */
export const quarantineName = (name: string) => `${name}-quarantine`;

/** How many leftover jobs one sweep fails at most: a quarantine's cost stays bounded. */
const SWEEP = 100;
/** How many times, 50 ms apart, a quarantine waits for its job that another receiver's sweep took. */
const TAKEN_WAITS = 40;

/** Where the inbox's queue lives: the quarantine queue is beside it, on the same Redis and prefix. */
export interface QuarantineAt {
  name: string;
  connection: ConnectionOptions;
  prefix: string;
  skipVersionCheck?: boolean | undefined;
  /** A read-only inbox's: the queue's meta key is not written. */
  skipMetasUpdate?: boolean | undefined;
  /** The inbox's `lockDurationMs`: a taken job's lock, and how often a lapsed one is looked for. Defaults to 30 000. */
  lockDuration?: number | undefined;
}

/** The quarantine queue of one inbox: its failed set holds the quarantined dead letters. */
export interface QuarantineQueue {
  /** The BullMQ queue `<name>-quarantine` (made on first use). */
  queue(): Queue;
  /** Its issue tally, apart from the main queue's (each reconciled against its own failed set). */
  readonly tally: IssueTallyStore;
  /**
   * Adds the delivery (its key's job id) and fails it, with the error a worker's try would write,
   * before it resolves; a key the main queue holds (`held`) adds nothing.
   */
  quarantine(delivery: QueuedDelivery, held: (id: string) => Promise<boolean>): Promise<void>;
  /** Fails the jobs a receiver added but did not fail (killed in between): at most {@link SWEEP}. */
  sweep(): Promise<void>;
  close(): Promise<void>;
}

/**
 * BullMQ's public API adds no job as failed: a job reaches the failed set only from `active`, moved
 * by the holder of its lock. So quarantined events have a queue of their own, which nothing works:
 * a receiver adds the job, takes a job with a worker of its own that has no processor (BullMQ's
 * manual processing: `getNextJob`, then `moveToFailed` with the lock's token) and fails it. Every job
 * there is meant to fail, so whichever job a receiver takes, it fails it with that job's own problem,
 * and a job another receiver left (killed between the add and the take) is failed by the next
 * quarantine's sweep or a worker's start.
 */
export function quarantineQueue(at: QuarantineAt, client: () => Promise<TallyClient>): QuarantineQueue {
  const name = quarantineName(at.name);
  const tally = redisIssueTally(client, at.prefix, name);
  let made: Queue | undefined;
  let taker: { worker: Worker; release(): void } | undefined;
  /** The sweeps a stalled job started, one after another: awaited by close(). */
  let sweeping: Promise<unknown> = Promise.resolve();
  const settings = {
    prefix: at.prefix,
    ...(at.skipVersionCheck === undefined ? {} : { skipVersionCheck: at.skipVersionCheck }),
  };
  let closed = false;
  const refuseClosed = () => {
    if (closed)
      throw new Error(`[service-webhooks] ${name} is closed; open a new inbox to quarantine or read it`);
  };
  const queue = () => {
    if (made === undefined) {
      refuseClosed();
      made = new (loadBullmq().Queue)(name, {
        connection: at.connection,
        ...settings,
        ...(at.skipMetasUpdate === true ? { skipMetasUpdate: true } : {}),
      });
      // Its errors are the main queue's too, logged there.
      made.on('error', () => undefined);
    }
    return made;
  };
  function worker(): Worker {
    if (taker === undefined) {
      // Made after close(), its stalled check and connection would never be closed.
      refuseClosed();
      const { connection, release } = workerConnection(at.connection);
      const lockDuration = at.lockDuration ?? 30_000;
      const w = new (loadBullmq().Worker)(name, null, {
        connection,
        ...settings,
        autorun: false,
        lockDuration,
        stalledInterval: lockDuration,
      });
      w.on('error', () => undefined);
      // A job taken by a receiver killed before failing it goes back to waiting when its lock runs
      // out (manual processing runs BullMQ's stalled check only when asked), and is failed then:
      // left waiting, it would be no dead letter, counted nowhere, until the next quarantine.
      w.on('stalled', () => {
        sweeping = sweeping.then(() => sweep()).catch(() => undefined);
      });
      void w.startStalledCheckTimer().catch(() => undefined);
      taker = { worker: w, release };
    }
    return taker.worker;
  }

  /** Takes one waiting job and fails it with its own problem; the id it failed, or undefined when none waited. */
  async function failOne(): Promise<string | undefined> {
    const token = `quarantine-${process.pid}-${Math.random().toString(36).slice(2)}`;
    const job = (await worker().getNextJob(token, { block: false })) as Job | undefined;
    if (job?.id === undefined) return undefined;
    const { UnrecoverableError } = loadBullmq();
    await job.moveToFailed(new UnrecoverableError(unreadableError(job.data as QueuedDelivery)), token);
    const failed = await queue().getJob(job.id);
    // Not counted now (Redis away): the issues' reconcile counts it within a pass.
    if (failed !== undefined) await tallyJob(tally, failed).catch(() => undefined);
    return job.id;
  }

  async function sweep(until?: string): Promise<boolean> {
    for (let n = 0; n < SWEEP; n++) {
      const id = await failOne();
      if (id === undefined) return false;
      if (id === until) return true;
    }
    return false;
  }

  return {
    queue,
    tally,
    async quarantine(delivery, held) {
      const id = jobIdFor(delivery.key);
      if (await held(id)) return;
      const q = queue();
      // An id there already (quarantined before) makes add() a no-op.
      await q.add(delivery.type, delivery, {
        jobId: id,
        attempts: 1,
        removeOnComplete: true,
        removeOnFail: false,
      });
      if (await sweep(id)) return;
      // Taken by another receiver's sweep, or failed before: a dead letter once that one settles.
      for (let wait = 0; wait < TAKEN_WAITS; wait++) {
        const state = await q.getJobState(id);
        if (state === 'failed' || state === 'unknown') return;
        await new Promise((resolve) => setTimeout(resolve, 50));
        if (state === 'waiting' && (await sweep(id))) return;
      }
      // Held in Redis but not a dead letter yet (its taker killed holding the lock, or this inbox
      // closing): not acknowledged, so the Service's retry finds it again and fails it then.
      throw new Error(
        `[service-webhooks] the quarantined event's job is held in ${name} but was not failed within ${
          TAKEN_WAITS * 50
        } ms (taken by a receiver that did not fail it, or the inbox is closing); answering 503 so the Service retries it`,
      );
    },
    async sweep() {
      await sweep();
    },
    async close() {
      closed = true;
      // A sweep Redis does not answer is not waited for past a moment: close() is bounded.
      await Promise.race([sweeping, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
      if (taker !== undefined) await taker.worker.close().finally(taker.release);
      if (made !== undefined) await made.close();
    },
  };
}
