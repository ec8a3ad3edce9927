import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEventRouter, createNodeHandler, type AnyWebhookEvent, type Inbox } from '../lib';
import { createEmulator, type Emulator } from '../lib/emulator';
import { useEngineServer } from './support/describe-each-engine';
import { bullmqEngine, eventually, pgBossEngine } from './support/inbox-engines';
import { describeWithPostgres } from './support/postgres-server';
import { describeWithRedis } from './support/redis-server';

const HANDLER_MS = 60_000;
const TOKEN = 'whsk_slow_handler_token_1234';

/** A receiver on node:http with the inbox, and a worker whose handler takes a minute. */
async function slowReceiver(inbox: Inbox) {
  const runs: { id: string; started: number; finished?: number }[] = [];
  const router = createEventRouter().on('ag.hid_org.created', async (event: AnyWebhookEvent) => {
    const run: { id: string; started: number; finished?: number } = { id: event.id, started: Date.now() };
    runs.push(run);
    await new Promise((resolve) => setTimeout(resolve, HANDLER_MS));
    run.finished = Date.now();
  });
  const handler = createNodeHandler({
    bearerTokens: [TOKEN],
    router: createEventRouter(),
    inbox,
    logger: false,
  });
  const server = http.createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const worker = await inbox.startWorker(router, { timeoutMs: 2 * HANDLER_MS, logger: false });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    runs,
    close: async () => {
      await worker.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describeWithRedis('a handler that takes 60 s, behind the inbox', () => {
  describeWithPostgres('(BullMQ and pg-boss side by side)', () => {
    const servers = [useEngineServer(bullmqEngine), useEngineServer(pgBossEngine)];
    let emulator: Emulator | undefined;
    afterAll(async () => {
      await emulator?.close();
    });

    it(
      'is acknowledged once, within the Service answer time, and never retried while it runs',
      async () => {
        // The Service's own timings: an answer within 10 s, retries a second later and on.
        emulator = await createEmulator({ attemptTimeoutMs: 10_000, initialBackoffMs: 1_000, logger: false });
        const inboxes = servers.map((s, i) => s().inbox(`slow-${process.pid}-${i}`));
        const receivers = await Promise.all(inboxes.map(slowReceiver));
        try {
          for (const [i, r] of receivers.entries())
            await emulator.registerWebhook({
              name: `slow ${i}`,
              url: r.url,
              subscribedEvents: ['ag.hid_org.created'],
              privateKey: TOKEN,
            });
          const { event } = emulator.emit('ag.hid_org.created');
          await emulator.waitForDeliveries({ eventId: event.id, count: 2 }, { timeoutMs: 15_000 });
          await eventually('both handlers started', () => receivers.every((r) => r.runs.length === 1));
          // The handlers are running; the Service has its 200s already. Within its answer time: the
          // emulator drops an attempt unanswered after attemptTimeoutMs (no status, not acknowledged).
          for (const attempt of emulator.attempts)
            expect(attempt).toMatchObject({
              eventId: event.id,
              status: 200,
              outcome: 'acknowledged',
              attempt: 1,
            });
          await eventually(
            'both handlers finished',
            () => receivers.every((r) => r.runs[0]?.finished !== undefined),
            HANDLER_MS + 20_000,
          );
          // A minute later: still one attempt per webhook, and each handler ran once.
          expect(emulator.attempts).toHaveLength(2);
          expect(receivers.map((r) => r.runs.length)).toEqual([1, 1]);
          for (const r of receivers)
            expect((r.runs[0]?.finished ?? 0) - (r.runs[0]?.started ?? 0)).toBeGreaterThanOrEqual(
              HANDLER_MS - 50,
            );
        } finally {
          for (const r of receivers) await r.close();
          for (const inbox of inboxes) await inbox.close();
        }
      },
      HANDLER_MS + 60_000,
    );
  });
});
