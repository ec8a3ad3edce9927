// Review (issue 20): "Enqueue is idempotent by the event's idempotency key" — also once the event is a dead letter?
import { createEventRouter, type Inbox } from '../lib';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { queuedDelivery } from '../lib/inbox/queued-delivery';
import { normalizeEvent } from '../lib/events/normalize-event';
import { buildEvent } from '../lib/testing';
import { describeEachEngine } from './support/describe-each-engine';
import { eventually } from './support/inbox-engines';

function deliveryOf(id: string) {
  const envelope = buildEvent('ag.access_pass.issued', {}, { id });
  const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
  return queuedDelivery(idempotencyKey('', event.source, id), event, () => undefined, null);
}

describeEachEngine('re-enqueue of a dead-lettered key on $name', (_engine, server) => {
  it('adds nothing (the job id holds)', async () => {
    const inbox: Inbox = server().inbox(`redeliver-${process.pid}`);
    const runs: string[] = [];
    const worker = await inbox.startWorker(
      createEventRouter().onAny((event) => {
        runs.push(event.id);
        throw new Error('down');
      }),
      { attempts: 1, logger: false },
    );
    try {
      await inbox.enqueue(deliveryOf('evt_k'));
      await eventually('a dead letter', async () => (await inbox.status()).dead === 1);
      // The Service sends the same event again, to a receiver whose ledger does not know it.
      await inbox.enqueue(deliveryOf('evt_k'));
      await new Promise((r) => setTimeout(r, 1500));
      const status = await inbox.status();
      console.log(_engine.name, JSON.stringify(status), 'runs', runs.length);
      expect(runs).toHaveLength(1);
    } finally {
      await worker.close();
      await inbox.close();
    }
  }, 30_000);
});
