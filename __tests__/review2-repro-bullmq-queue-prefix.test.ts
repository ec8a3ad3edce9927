// Review repro (issue 20, bullmqInbox({ queue })): a BullMQ Queue of the user's with its own `prefix`.
import { Queue } from 'bullmq';
import { createEventRouter } from '../lib';
import { bullmqInbox } from '../lib/bullmq';
import { redisConnection } from '../lib/bullmq/redis-connection';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { queuedDelivery } from '../lib/inbox/queued-delivery';
import { normalizeEvent } from '../lib/events/normalize-event';
import { buildEvent } from '../lib/testing';
import { describeEachEngine } from './support/describe-each-engine';
import { bullmqEngine, eventually } from './support/inbox-engines';

describeEachEngine(
  'bullmqInbox({ queue }) with a prefixed Queue',
  (_engine, server) => {
    it('runs what it queued', async () => {
      const queue = new Queue(`prefixed-${process.pid}`, {
        connection: redisConnection(server().url),
        prefix: 'myapp',
      });
      const inbox = bullmqInbox({ queue, logger: false });
      const runs: string[] = [];
      const worker = await inbox.startWorker(
        createEventRouter().onAny((event) => void runs.push(event.id)),
        { logger: false },
      );
      try {
        const envelope = buildEvent('ag.access_pass.issued', {}, { id: 'evt_prefixed' });
        const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
        await inbox.enqueue(
          queuedDelivery(idempotencyKey('', event.source, event.id), event, () => undefined, null),
        );
        await eventually('the worker ran it', () => runs.length === 1, 5_000);
      } finally {
        await worker.close();
        await inbox.close();
        await queue.close();
      }
    }, 30_000);
  },
  [bullmqEngine],
);
