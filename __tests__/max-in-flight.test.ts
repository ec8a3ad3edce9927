import { Registry } from 'prom-client';
import { createEventRouter, createFetchHandler, OptionsError } from '../lib';
import { prometheusMetrics } from '../lib/metrics';
import { DELIVERY_HEADERS } from '../lib/testing';
import { captureLogger } from './support/capture-logger';
import { issued, TOKEN } from './support/contract-rows';
import { pollUntil } from './support/poll-until';

const BURST = 200;
const MAX_IN_FLIGHT = 20;
/** The Service retries a shed delivery; a bounded number of rounds here. */
const RETRY_ROUNDS = 50;

/** A delivery whose body is a stream that counts the bytes the receiver pulls from it. */
function countedDelivery(id: string) {
  const bytes = new TextEncoder().encode(JSON.stringify(issued({}, id)));
  const counted = { id, read: 0, size: bytes.length };
  // highWaterMark 0: nothing is pulled until the receiver reads.
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        counted.read = bytes.length;
        controller.enqueue(bytes);
        controller.close();
      },
    },
    { highWaterMark: 0 },
  );
  const request = new Request('http://127.0.0.1/webhooks', {
    method: 'POST',
    headers: { ...DELIVERY_HEADERS, authorization: `Bearer ${TOKEN}` },
    body,
    duplex: 'half',
  } as RequestInit);
  return { counted, request };
}

describe('maxInFlight: shedding a burst before it hurts', () => {
  it(`answers the excess of ${BURST} concurrent slow deliveries 503 + Retry-After unread, and all run once after the retries`, async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const runs = new Map<string, number>();
    let running = 0;
    const router = createEventRouter().onAny(async (event) => {
      runs.set(event.id, (runs.get(event.id) ?? 0) + 1);
      running++;
      await gate;
      running--;
    });
    const registry = new Registry();
    const logger = captureLogger();
    const handler = createFetchHandler({
      bearerTokens: [TOKEN],
      router,
      logger,
      maxInFlight: MAX_IN_FLIGHT,
      onDelivery: prometheusMetrics({ registry }),
    });

    const sent = Array.from({ length: BURST }, (_, i) => countedDelivery(`evt_burst_${i}`));
    const answers: { id: string; res: Response }[] = [];
    const all = sent.map(({ counted, request }) =>
      handler(request).then((res) => void answers.push({ id: counted.id, res })),
    );
    await pollUntil('the burst is admitted or shed', () => answers.length === BURST - MAX_IN_FLIGHT, {
      timeoutMs: 30_000,
      describe: () => `${answers.length} answered, ${running} running`,
    });
    expect(running).toBe(MAX_IN_FLIGHT);

    // A handshake is never shed, even with every slot taken.
    const handshake = await handler(
      new Request('http://127.0.0.1/webhooks', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-webhook-challenge': 'abc' },
        body: JSON.stringify({ challenge: 'abc' }),
      }),
    );
    expect(handshake.status).toBe(200);

    const shedIds = new Set(answers.map((a) => a.id));
    for (const { res } of answers) {
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(await res.text())).toMatchObject({
        status: 503,
        type: expect.stringMatching(/shed-in-flight$/),
      });
    }
    // Exactly the excess was shed, and not one byte of a shed body was read; the admitted were read whole.
    expect(shedIds.size).toBe(BURST - MAX_IN_FLIGHT);
    const read = (shed: boolean) =>
      sent.filter(({ counted }) => shedIds.has(counted.id) === shed).map(({ counted }) => counted.read);
    expect(read(true).every((n) => n === 0)).toBe(true);
    expect(read(false)).toEqual(
      sent.filter(({ counted }) => !shedIds.has(counted.id)).map(({ counted }) => counted.size),
    );
    // Nothing shed was acknowledged or run.
    expect([...runs.keys()].filter((id) => shedIds.has(id))).toEqual([]);
    // Logged once, not once per request.
    expect(logger.messages('warn').filter((m) => m.includes('shed a delivery'))).toEqual([
      expect.stringMatching(/20 deliveries in flight \(maxInFlight\)/),
    ]);

    release();
    await Promise.all(all);
    expect(answers.filter((a) => a.res.status === 200)).toHaveLength(MAX_IN_FLIGHT);

    // The Service's retries: what was shed comes again, all at once, until every one is acknowledged.
    let pending = [...shedIds];
    let shedTotal = BURST - MAX_IN_FLIGHT;
    for (let round = 0; pending.length > 0 && round < RETRY_ROUNDS; round++) {
      const results = await Promise.all(
        pending.map(async (id) => ({ id, status: (await handler(countedDelivery(id).request)).status })),
      );
      expect(results.every((r) => r.status === 200 || r.status === 503)).toBe(true);
      shedTotal += results.filter((r) => r.status === 503).length;
      pending = results.filter((r) => r.status === 503).map((r) => r.id);
    }
    expect(pending).toEqual([]);
    expect(runs.size).toBe(BURST);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect(await registry.metrics()).toContain(
      `service_webhooks_shed_total{reason="in-flight"} ${shedTotal}`,
    );
  }, 60_000);

  it.each([0, -1, 1.5, '20', Infinity, null])('refuses maxInFlight %p at construction', (value) => {
    const build = () =>
      createFetchHandler({
        bearerTokens: [TOKEN],
        router: createEventRouter(),
        logger: false,
        maxInFlight: value as number,
      });
    expect(build).toThrow(OptionsError);
    expect(build).toThrow(/^\[service-webhooks\] createFetchHandler: maxInFlight must be a whole number ≥ 1/);
  });

  it('suggests maxInFlight for a misspelling', () => {
    expect(() =>
      createFetchHandler({ bearerTokens: [TOKEN], router: createEventRouter(), maxInflight: 5 } as never),
    ).toThrow(/did you mean "maxInFlight"/);
  });
});
