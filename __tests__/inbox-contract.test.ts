import {
  createEventRouter,
  createFetchHandler,
  RetryLater,
  type AnyWebhookEvent,
  type Inbox,
  type ReceiverOptions,
} from '../lib';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { buildEvent } from '../lib/testing';
import { binaryMode, delivery, issued, ROWS, TOKEN } from './support/contract-rows';
import { DOORS, type OpenDoor } from './support/doors';
import { describeEachEngine } from './support/describe-each-engine';
import { eventually } from './support/inbox-engines';

let queues = 0;

describeEachEngine('the inbox contract on $name', (engine, server) => {
  describe.each(DOORS)('through $name', (door) => {
    // `test` is a row of the queue and the worker behind the door (the ledger, dead letters,
    // RetryLater), not of the door's answer: it runs through the first door only, once per engine.
    const test = door === DOORS[0] ? it : (_name: string, _row: () => Promise<void>): void => undefined;
    const opened: { close(): Promise<void> }[] = [];
    afterEach(async () => {
      for (const o of opened.reverse()) await o.close();
      opened.length = 0;
    });
    async function open(options: Partial<ReceiverOptions> = {}) {
      const inbox = server().inbox(`contract-${process.pid}-${++queues}`);
      opened.push(inbox);
      const d: OpenDoor = await door.open({
        bearerTokens: [TOKEN],
        router: createEventRouter(),
        logger: false,
        inbox,
        ...options,
      });
      opened.push(d);
      return { d, inbox };
    }
    async function worker(inbox: Inbox, handler: (event: AnyWebhookEvent) => unknown, attempts = 3) {
      const seen: { event: AnyWebhookEvent; userAgent: string | undefined; at: number }[] = [];
      const router = createEventRouter().onAny(async (event, ctx) => {
        seen.push({ event, userAgent: ctx.header('user-agent'), at: Date.now() });
        await handler(event);
      });
      const w = await inbox.startWorker(router, { attempts, backoff: { delayMs: 50 }, logger: false });
      opened.push(w);
      return seen;
    }

    it('queues an event (200 queued), and a worker runs it once with the event the sync path reads', async () => {
      const requests = [
        delivery(issued()),
        delivery(buildEvent('ag.access_pass.devices.added', {}, { layout: 'B' })),
        binaryMode,
      ];
      // What the handlers get in the request, for comparison.
      const direct: { event: AnyWebhookEvent; userAgent: string | undefined }[] = [];
      const sync = await door.open({
        bearerTokens: [TOKEN],
        router: createEventRouter().onAny(
          (event, ctx) => void direct.push({ event, userAgent: ctx.header('user-agent') }),
        ),
        logger: false,
      });
      opened.push(sync);
      for (const r of requests) expect((await sync.send(r)).status).toBe(200);

      const { d, inbox } = await open();
      for (const r of requests) {
        const answer = await d.send(r);
        expect(answer.status).toBe(200);
        expect(answer.headers['content-type']).toMatch(/^application\/json/);
        expect(JSON.parse(answer.text)).toMatchObject({ status: 'queued' });
      }
      expect((await inbox.status()).waiting).toBe(3);
      const seen = await worker(inbox, () => undefined);
      await eventually('three jobs run', () => seen.length === 3);
      // The same (event, ctx): the same normalized event, the same request headers read through ctx.
      const byId = (a: { event: { id: string } }, b: { event: { id: string } }) =>
        a.event.id.localeCompare(b.event.id);
      expect(seen.map(({ event, userAgent }) => ({ event, userAgent })).sort(byId)).toEqual(
        [...direct].sort(byId),
      );
      await eventually('the queue empties', async () => (await inbox.status()).waiting === 0);
      expect(seen).toHaveLength(3);
    });

    it('queues the body as sent, so the worker reads the numbers the receiver read; a job queued by an earlier version (the envelope written again) still runs', async () => {
      // -0 and 1e400 (Infinity) have no JSON text of their own: written again they would reach the
      // worker as 0 and null where the receiver read -0 and Infinity.
      const event = issued({ metadata: { big: 'BIG', negative: 'NEG' } } as never, 'evt_as_sent');
      const body = JSON.stringify(event, null, 1).replace('"BIG"', '1e400').replace('"NEG"', '-0');
      const earlier = delivery(issued({}, 'evt_earlier_version'));
      const direct: AnyWebhookEvent[] = [];
      const sync = await door.open({
        bearerTokens: [TOKEN],
        router: createEventRouter().onAny((e) => void direct.push(e)),
        logger: false,
      });
      opened.push(sync);
      expect((await sync.send(delivery(event, {}, body))).status).toBe(200);
      expect((await sync.send(earlier)).status).toBe(200);
      expect(direct[0]?.data).toMatchObject({ metadata: { big: Infinity, negative: -0 } });

      const { d, inbox } = await open();
      const answer = await d.send(delivery(event, {}, body));
      expect(JSON.parse(answer.text)).toMatchObject({ status: 'queued' });
      // What the previous versions queued: the envelope written again by JSON.stringify.
      await inbox.enqueue(queuedAgain(earlier));
      const seen = await worker(inbox, () => undefined);
      await eventually('both jobs run', () => seen.length === 2);
      const byId = (a: AnyWebhookEvent, b: AnyWebhookEvent) => a.id.localeCompare(b.id);
      expect(seen.map((s) => s.event).sort(byId)).toEqual([...direct].sort(byId));
    });

    test('answers a redelivery of a queued event 200, without a second job', async () => {
      const { d, inbox } = await open();
      const request = delivery(issued({}, 'evt_redelivered'));
      expect(JSON.parse((await d.send(request)).text)).toMatchObject({ status: 'queued' });
      const again = await d.send(request);
      expect(again.status).toBe(200);
      expect(JSON.parse(again.text)).toMatchObject({ status: 'duplicate' });
      // A receiver with its own ledger (another instance, or after a restart) enqueues again: the job id holds.
      await inbox.enqueue(queuedAgain(request));
      expect((await inbox.status()).waiting).toBe(1);
    });

    it.each(ROWS.filter((r) => r.status >= 400 && r.status < 500 && r.options === undefined).slice(0, 8))(
      'queues nothing for $name ($status)',
      async (row) => {
        const { d, inbox } = await open();
        const answer = await d.send(row.request);
        expect(answer.status).toBe(row.status);
        expect((await inbox.status()).waiting).toBe(0);
      },
    );

    it('answers 503 + Retry-After when the queue does not confirm in idempotency.timeoutMs; the retry queues it once', async () => {
      const { d, inbox } = await open({ idempotency: { timeoutMs: 400 }, retryAfterSeconds: 11 });
      // Make sure the queue is set up before the server freezes, so the freeze hits the enqueue.
      await inbox.status();
      const request = delivery(issued({}, 'evt_frozen'));
      server().pause();
      let answer;
      try {
        answer = await d.send(request);
      } finally {
        server().resume();
      }
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('11');
      expect(JSON.parse(answer.text)).toMatchObject({
        type: 'urn:service-webhooks:problem:inbox-unavailable',
      });
      const retry = await d.send(request);
      expect(JSON.parse(retry.text)).toMatchObject({ status: 'queued' });
      await eventually('the late enqueue settled', async () => (await inbox.status()).waiting >= 1);
      expect((await inbox.status()).waiting).toBe(1);
    });

    test('keeps an event whose tries ran out in the dead letters, refuses its redelivery, and replays it once', async () => {
      const { d, inbox } = await open();
      let broken = true;
      const seen = await worker(
        inbox,
        () => {
          if (broken) throw new Error('the warehouse API is down');
        },
        2,
      );
      const event = issued({}, 'evt_dead');
      expect((await d.send(delivery(event))).status).toBe(200);
      await eventually('a dead letter', async () => (await inbox.deadLetters()).length === 1);
      const [dead] = await inbox.deadLetters();
      expect(dead).toMatchObject({
        attempts: 2,
        delivery: { id: 'evt_dead', type: event.type },
      });
      expect(JSON.parse(dead?.delivery.envelope ?? '')).toEqual(event);
      expect(dead?.lastError).toMatch(/the warehouse API is down/);
      expect(dead?.receivedAt).toBeInstanceOf(Date);
      expect(dead?.failedAt?.getTime()).toBeGreaterThanOrEqual(dead?.receivedAt.getTime() ?? Infinity);
      expect((await inbox.deadLetters({ type: 'ag.account_balance.low' })).length).toBe(0);
      // The Service sends it again, to a receiver whose ledger does not know it: the dead letter's id
      // holds, as a queued job's does (enqueue is idempotent by the key), so nothing runs it again.
      expect((await d.send(delivery(event))).status).toBe(200);
      await inbox.enqueue(queuedAgain(delivery(event)));
      expect(await inbox.status()).toMatchObject({ waiting: 0, active: 0, dead: 1 });
      expect(seen).toHaveLength(2);
      broken = false;
      expect(await inbox.replay('evt_dead')).toBe(1);
      expect(await inbox.replay('evt_dead')).toBe(0);
      await eventually('the replayed job succeeded', () => seen.length === 3);
      await eventually('no dead letters', async () => (await inbox.status()).dead === 0);
    });

    test("lets a handler's RetryLater choose the delay of the next try", async () => {
      const { d, inbox } = await open();
      const seen = await worker(inbox, () => {
        if (seen.length === 1) throw new RetryLater('busy', { retryAfterSeconds: 1 });
      });
      expect((await d.send(delivery(issued()))).status).toBe(200);
      await eventually('the second try', () => seen.length === 2);
      const [first, second] = seen;
      // The worker's own backoff is 50 ms: a gap of a second is RetryLater's.
      expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(950);
    });
  });
});

/** The delivery another receiver instance would enqueue for `request`: the same key. */
function queuedAgain(request: { body?: string | Uint8Array }) {
  const event = JSON.parse(String(request.body)) as { id: string; type: string; source: string };
  return {
    key: idempotencyKey('', event.source, event.id),
    id: event.id,
    type: event.type,
    source: event.source,
    time: null,
    envelope: JSON.stringify(event),
    headers: {},
    traceparent: null,
    receivedAt: new Date().toISOString(),
  };
}

describe('the inbox option', () => {
  it.each([{}, { enqueue: () => undefined }, 'redis://localhost'])(
    'refuses %p at construction, saying what to pass',
    (inbox) => {
      expect(() =>
        createFetchHandler({
          bearerTokens: [TOKEN],
          router: createEventRouter(),
          inbox: inbox as unknown as Inbox,
        }),
      ).toThrow(
        /\[service-webhooks\] createFetchHandler: inbox must be an Inbox: bullmqInbox\(\{ connection \}\)/,
      );
    },
  );
});
