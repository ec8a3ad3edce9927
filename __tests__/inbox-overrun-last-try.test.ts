// Issue 28 fault 5 (review), on both engines: the LAST try of an event times out while its handler
// (ignoring ctx.signal) runs on and then succeeds. It is put back, not dead-lettered, and its next
// try finds the event done.
import { createEventRouter, MemoryStore, type JobRecord } from '../lib';
import { normalizeEvent } from '../lib/events/normalize-event';
import { queuedDelivery } from '../lib/inbox/queued-delivery';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { buildEvent } from '../lib/testing';
import { describeEachEngine } from './support/describe-each-engine';
import { eventually } from './support/inbox-engines';

let queues = 0;

describeEachEngine('the last try of an overrunning handler, on $name', (_engine, server) => {
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of opened.reverse()) await o.close();
    opened.length = 0;
  });

  it('an event whose handler succeeded after the timeout of its last try is not a dead letter', async () => {
    const inbox = server().inbox(`overrun-last-${process.pid}-${++queues}`);
    opened.push(inbox);
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let finished!: () => void;
    const handled = new Promise<void>((r) => (finished = r));
    const router = createEventRouter().on('ag.access_pass.issued', async () => {
      await gate; // ignores ctx.signal
      finished();
    });
    const jobs: JobRecord[] = [];
    opened.push(
      await inbox.startWorker(router, {
        timeoutMs: 500,
        attempts: 1,
        idempotency: new MemoryStore({ logger: false }),
        logger: false,
        onJob: (record) => void jobs.push(record),
      }),
    );
    const envelope = buildEvent('ag.access_pass.issued', {}, { id: 'evt_last_try' });
    const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
    await inbox.enqueue(
      queuedDelivery(idempotencyKey('', event.source, event.id), event, () => undefined, null),
    );
    await eventually('the try timed out', () => jobs.length > 0, 30_000);
    open();
    await handled;
    await eventually('the next try found it done', () => jobs.some((j) => j.outcome === 'duplicate'), 30_000);
    expect({ outcomes: jobs.map((j) => j.outcome), dead: (await inbox.status()).dead }).toEqual({
      outcomes: expect.not.arrayContaining(['dead']) as unknown,
      dead: 0,
    });
  }, 60_000);
});
