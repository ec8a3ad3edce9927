// pg-boss's own inbox faults, beyond the contract every engine keeps (inbox-contract.test.ts).
import { createEventRouter, type Inbox } from '../lib';
import { normalizeEvent } from '../lib/events/normalize-event';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { queuedDelivery, type QueuedDelivery } from '../lib/inbox/queued-delivery';
import { pgBossInbox } from '../lib/pg-boss';
import { buildEvent } from '../lib/testing';
import { captureLogger } from './support/capture-logger';
import { eventually } from './support/inbox-engines';
import { describeWithPostgres, startPostgresServer, type PostgresServer } from './support/postgres-server';
import { startSlowLink } from './support/slow-link';

/** The delivery a receiver queues for event `id`. */
function queued(id: string): QueuedDelivery {
  const envelope = buildEvent('ag.access_pass.issued', {}, { id });
  const event = normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);
  return queuedDelivery(idempotencyKey('', event.source, id), event, () => undefined, null);
}

describeWithPostgres('pgBossInbox on PostgreSQL', () => {
  let server: PostgresServer;
  const opened: { close(): Promise<void> }[] = [];
  beforeAll(async () => {
    server = await startPostgresServer();
  }, 60_000);
  afterEach(async () => {
    for (const o of opened.reverse()) await o.close();
    opened.length = 0;
  });
  afterAll(async () => {
    await server?.close();
  });
  const open = (name: string, url = server.url): Inbox => {
    const inbox = pgBossInbox({ connectionString: url, name });
    opened.push(inbox);
    return inbox;
  };

  it('replays 200 dead letters over a slow link while workers fail them again: each event ends dead once, none lost', async () => {
    const name = `replay-race-${process.pid}`;
    const inbox = open(name);
    const runs = new Map<string, number>();
    const router = createEventRouter().onAny((event) => {
      runs.set(event.id, (runs.get(event.id) ?? 0) + 1);
      throw new Error('the CRM is still down');
    });
    opened.push(await inbox.startWorker(router, { attempts: 1, concurrency: 8, logger: false }));
    const ids = Array.from({ length: 200 }, (_, i) => `evt-${String(i).padStart(3, '0')}`);
    for (const id of ids) await inbox.enqueue(queued(id));
    await eventually('200 dead letters', async () => (await inbox.status()).dead === 200, 60_000);

    // The replay runs as a CLI over a remote link would: each round trip 40 ms longer.
    const link = await startSlowLink(server.url, 20);
    opened.push(link);
    expect(await open(name, link.url).replay({})).toBe(200);
    await eventually(
      'every replayed event ran again and the queue is empty',
      async () => {
        const status = await inbox.status();
        return ids.every((id) => runs.get(id) === 2) && status.waiting === 0 && status.active === 0;
      },
      60_000,
    );
    const dead = await inbox.deadLetters({ limit: 1000 });
    expect(dead.map((d) => d.delivery.id).sort()).toEqual(ids);
    expect(await inbox.status()).toMatchObject({ waiting: 0, active: 0, dead: 200 });
    // Each is still refused a redelivery, and replays again.
    await inbox.enqueue(queued('evt-007'));
    expect((await inbox.status()).waiting).toBe(0);
    expect(ids.every((id) => runs.get(id) === 2)).toBe(true);
  }, 180_000);

  it("logs the errors pg-boss reports (its database gone), once a minute per kind, to the inbox's logger", async () => {
    const logger = captureLogger();
    const inbox = pgBossInbox({ connectionString: server.url, name: `logged-${process.pid}`, logger });
    opened.push(inbox);
    await inbox.status();
    await server.stop();
    try {
      await expect(inbox.status()).rejects.toThrow();
      await eventually('an error logged', () => logger.records.length > 0, 30_000);
    } finally {
      await server.start();
    }
    expect(logger.records).toEqual([
      {
        level: 'error',
        message: '[service-webhooks] pg-boss reported an error; it keeps trying (check the database)',
        meta: expect.objectContaining({ reason: 'pg-boss-error', err: expect.any(Error) }),
      },
    ]);
    expect(await inbox.status()).toMatchObject({ waiting: 0 });
  }, 60_000);
});
