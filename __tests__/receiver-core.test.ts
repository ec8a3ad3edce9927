import { createEventRouter, MemoryStore } from '../lib';
import { createReceiverCore } from '../lib/core/receiver-core';
import { openTelemetryTracing } from '../lib/observability/open-telemetry-tracing';
import { buildEvent } from '../lib/testing';
import { coreRequest } from './support/core-request';

const TOKEN = 'tok_receiver_core';
/** The receiver's own limit in these rows, in bytes. */
const LIMIT = 4_096;

const request = (
  body: string,
  read: (bytes: Buffer) => Promise<Uint8Array>,
  readNow?: (bytes: Buffer) => Uint8Array | undefined,
) => coreRequest(body, TOKEN, read, readNow);

/** How many microtask turns `promise` takes to settle, at most `bound`. */
async function turnsToSettle(promise: Promise<unknown>, bound = 50): Promise<number> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let turns = 0; turns < bound; turns++) {
    if (settled) return turns;
    await Promise.resolve();
  }
  return bound;
}

describe('createReceiverCore', () => {
  function core(handler: () => unknown) {
    const store = new MemoryStore({ logger: false });
    const receiver = createReceiverCore(
      {
        bearerTokens: [TOKEN],
        router: createEventRouter().on('ag.hid_org.created', handler),
        logger: false,
        idempotency: store,
        limit: LIMIT,
      },
      'test',
      openTelemetryTracing,
    );
    return { receiver, store };
  }

  // Each async step of the chain (handle, the reader, dispatch) cost a promise and turns of its own;
  // now only the body's read and the steps that really wait do.
  it('answers a delivery whose body, store and handler answer at once within 3 microtask turns', async () => {
    let runs = 0;
    const { receiver, store } = core(() => void runs++);
    const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt_turns' }));
    const handled = receiver.handle(request(body, (bytes) => Promise.resolve(bytes)));
    expect(await turnsToSettle(handled)).toBeLessThanOrEqual(3);
    const { answer, record } = await handled;
    expect([answer.status, record.outcome, record.status, runs]).toEqual([200, 'processed', 200, 1]);
    store.close();
  });

  it.each([
    ['offered at once (readNow)', (bytes: Buffer) => bytes, 0, 1],
    ['not here yet (readNow answers undefined)', () => undefined, 1, 3],
  ])('a body %s: read once, answered 200 within its turns', async (_name, readNow, reads, turns) => {
    let runs = 0;
    let readCalls = 0;
    const { receiver, store } = core(() => void runs++);
    const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt_now' }));
    const handled = receiver.handle(request(body, (bytes) => (readCalls++, Promise.resolve(bytes)), readNow));
    expect(await turnsToSettle(handled)).toBeLessThanOrEqual(turns);
    const { answer } = await handled;
    expect([answer.status, runs, readCalls]).toEqual([200, 1, reads]);
    store.close();
  });

  it.each<[string, (bytes: Buffer) => Uint8Array | undefined, () => unknown, waits: boolean, status: number]>(
    [
      [
        'a body offered at once, a lone synchronous handler',
        (bytes: Buffer) => bytes,
        () => undefined,
        false,
        200,
      ],
      [
        'a body offered at once, an async handler',
        (bytes: Buffer) => bytes,
        async () => undefined,
        true,
        200,
      ],
      ['a body not here yet', () => undefined, () => undefined, true, 200],
      [
        'a body offered at once, a handler that throws',
        (bytes: Buffer) => bytes,
        () => {
          throw new Error('x');
        },
        false,
        500,
      ],
    ],
  )(
    'handleNow: %s → the handled delivery itself, or a promise of it when a step waited',
    async (_name, readNow, handler, waits, status) => {
      const { receiver, store } = core(handler);
      const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt_handle_now' }));
      const handled = receiver.handleNow(request(body, (bytes) => Promise.resolve(bytes), readNow));
      expect(handled instanceof Promise).toBe(waits);
      const { answer, record } = await handled;
      expect([answer.status, record.status]).toEqual([status, status]);
      store.close();
    },
  );

  it('handleNow answers a refusal at once, as handle does in a promise', async () => {
    const { receiver, store } = core(() => undefined);
    const refused = receiver.handleNow({
      ...request('{}', (bytes) => Promise.resolve(bytes)),
      method: 'GET',
    });
    expect(refused instanceof Promise).toBe(false);
    expect((refused as { answer: { status: number } }).answer.status).toBe(405);
    expect(
      (await receiver.handle({ ...request('{}', (bytes) => Promise.resolve(bytes)), method: 'GET' })).answer
        .status,
    ).toBe(405);
    store.close();
  });

  // Each reading of the clock costs about as much as a small stage: the record's start and end, and
  // the handlers' start; a lone handler that settles at once is timed by its own end.
  it('reads the clock 4 times for a delivery whose body, store and lone handler answer at once', async () => {
    const { receiver, store } = core(() => undefined);
    const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt_clock' }));
    const clock = jest.spyOn(performance, 'now');
    try {
      const handled = receiver.handle(
        request(
          body,
          () => Promise.reject(new Error('read() must not be called')),
          (bytes) => bytes,
        ),
      );
      const readings = clock.mock.calls.length;
      const { answer, record } = await handled;
      expect([answer.status, record.outcome, readings]).toEqual([200, 'processed', 4]);
      expect(record.handlerMs).toBe(record.handlers?.[0]?.durationMs);
      expect(record.durationMs).toBeGreaterThanOrEqual(record.handlerMs ?? Infinity);
    } finally {
      clock.mockRestore();
      store.close();
    }
  });

  it('a body offered at once past the limit is refused 413, not acknowledged, its handler not run', async () => {
    let runs = 0;
    const { receiver, store } = core(() => void runs++);
    const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt_big' })) + ' '.repeat(LIMIT);
    const { answer, record } = await receiver.handle(
      request(
        body,
        () => Promise.reject(new Error('read() must not be called')),
        (bytes) => bytes,
      ),
    );
    expect([answer.status, record.problem, runs]).toEqual([413, 'payload-too-large', 0]);
    store.close();
  });

  const never = (): Promise<never> => new Promise<never>(() => undefined);
  it.each([
    ['a body that never arrives', never, () => undefined],
    ['a handler that never settles', (bytes: Buffer) => Promise.resolve(bytes), never],
  ])('drain() waits for %s, and reports the request', async (_name, read, handler) => {
    const { receiver, store } = core(handler);
    const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt_waiting' }));
    void receiver.handle(request(body, read));
    await expect(receiver.drain({ timeoutMs: 50 })).resolves.toMatchObject({ drained: false, requests: 1 });
    store.close();
  });

  it('drain() resolves at once once the deliveries were answered, none left counted', async () => {
    const { receiver, store } = core(() => undefined);
    const bodies = [1, 2, 3].map((i) =>
      JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: `evt_${i}` })),
    );
    const answers = await Promise.all(
      bodies.map((b) => receiver.handle(request(b, (bytes) => Promise.resolve(bytes)))),
    );
    expect(answers.map((h) => h.answer.status)).toEqual([200, 200, 200]);
    await expect(receiver.drain({ timeoutMs: 5_000 })).resolves.toEqual({
      drained: true,
      requests: 0,
      running: [],
    });
    store.close();
  });
});
