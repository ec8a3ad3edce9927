import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { inboxConsole, inboxConsoleFetch } from 'service-webhooks/inbox-console';
import type { Inbox } from '../lib';
import { nodeBody } from '../lib/adapters/incoming-message/node-body';
import { webBody } from '../lib/adapters/fetch/web-body';
import { HttpProblem } from '../lib/core/http-problem';
import { DEFAULT_BODY_TIMEOUT_MS } from '../lib/default-body-timeout';
import { ApiProblem } from '../lib/emulator/api-problem';
import { EmulatorRouter } from '../lib/emulator/emulator-router';
import { BodyTimeoutError, BodyTooLargeError, readBoundedBytes } from '../lib/read-bounded-text';
import { BOUNDED_READ_CASES, timeoutFor, type BoundedReadCase } from './support/bounded-reads';
import { listen } from './support/listen';

const FAILURE = new Error('the peer went away');
const encode = (chunk: string | Uint8Array) =>
  typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

function webStream(row: BoundedReadCase): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of row.chunks) controller.enqueue(encode(chunk));
      if (row.then === 'end') controller.close();
      if (row.then === 'fail') controller.error(FAILURE);
    },
  });
}

/** A node:http request as the readers see it: a stream with headers. */
function nodeStream(row: BoundedReadCase): IncomingMessage {
  const stream = Object.assign(new PassThrough(), {
    method: 'POST',
    url: '/body',
    headers: row.declared === undefined ? {} : { 'content-length': String(row.declared) },
  });
  for (const chunk of row.chunks) stream.write(chunk);
  if (row.then === 'end') stream.end();
  if (row.then === 'fail') setImmediate(() => stream.destroy(FAILURE));
  return stream as unknown as IncomingMessage;
}

function request(row: BoundedReadCase): Request {
  return new Request('http://receiver.invalid/', {
    method: 'POST',
    body: webStream(row),
    headers: row.declared === undefined ? {} : { 'content-length': String(row.declared) },
    duplex: 'half',
  } as RequestInit);
}

const problem = (status: number, slug: string) => ({ status, slug });
/** The emulator answers each refusal with Connection: close: the rest of the body is never read. */
const emulatorProblem = (status: number, slug: string) => ({
  init: { status, slug, headers: { Connection: 'close' } },
});

interface Reader {
  name: string;
  /** Whether it reads a Content-Length before the body. */
  seesHeaders: boolean;
  read(row: BoundedReadCase): Promise<string>;
  /** What this reader's caller answers for each refusal. */
  refusal: Record<Exclude<BoundedReadCase['outcome'], { text: string }>, (error: unknown) => void>;
}

/** The doors answer alike, whichever stream they read: the core's body problems. */
const DOOR_REFUSAL: Reader['refusal'] = {
  'too-large': (error) => expect(error).toMatchObject(problem(413, 'payload-too-large')),
  timeout: (error) => expect(error).toMatchObject(problem(408, 'body-timeout')),
  failed: (error) => expect(error).toMatchObject(problem(400, 'body-unreadable')),
};

const READERS: Reader[] = [
  {
    name: 'readBoundedBytes (web streams: fetch answers, the inbox console, the console client)',
    seesHeaders: false,
    read: async (row) => text(await readBoundedBytes(webStream(row), row.limit, timeoutFor(row))),
    refusal: {
      'too-large': (error) => expect(error).toBeInstanceOf(BodyTooLargeError),
      timeout: (error) => expect(error).toBeInstanceOf(BodyTimeoutError),
      failed: (error) => expect(error).toBe(FAILURE),
    },
  },
  {
    name: "webBody (the Fetch door's request body)",
    seesHeaders: true,
    read: async (row) => text(await webBody(request(row)).read(row.limit, timeoutFor(row))),
    refusal: DOOR_REFUSAL,
  },
  {
    name: 'nodeBody (node streams: the node, Express and Nest doors)',
    seesHeaders: true,
    read: async (row) => text(await nodeBody(nodeStream(row)).read(row.limit, timeoutFor(row))),
    refusal: DOOR_REFUSAL,
  },
  {
    name: "the emulator's routes (nodeBody, answered as the emulator's problems)",
    seesHeaders: true,
    // Its bound is the receiver's default, 10 s: the clock is advanced past it rather than waited for.
    async read(row) {
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
      try {
        const found = new EmulatorRouter()
          .post('/body', () => undefined)
          .match(nodeStream(row), new URL('http://127.0.0.1/body'));
        const reading = found!.req.text(row.limit);
        reading.catch(() => undefined);
        await jest.advanceTimersByTimeAsync(row.then === 'stall' ? DEFAULT_BODY_TIMEOUT_MS : 0);
        return await reading;
      } finally {
        jest.useRealTimers();
      }
    },
    refusal: {
      'too-large': (error) => {
        expect(error).toBeInstanceOf(ApiProblem);
        expect(error).toMatchObject(emulatorProblem(413, 'body-too-large'));
      },
      timeout: (error) => {
        expect(error).toBeInstanceOf(ApiProblem);
        expect(error).toMatchObject(emulatorProblem(408, 'body-timeout'));
      },
      failed: (error) => {
        expect(error).toBeInstanceOf(ApiProblem);
        expect(error).toMatchObject(emulatorProblem(400, 'body-aborted'));
      },
    },
  },
];

describe.each(READERS)('$name', (reader) => {
  const rows = BOUNDED_READ_CASES.filter((row) => reader.seesHeaders || row.declared === undefined);

  it.each(rows)('$name', async (row) => {
    const outcome = row.outcome;
    if (typeof outcome === 'object') {
      expect(await reader.read(row)).toBe(outcome.text);
      return;
    }
    const error = await reader.read(row).then(
      (read) => new Error(`read ${JSON.stringify(read)} instead of refusing`),
      (refused: unknown) => refused,
    );
    reader.refusal[outcome](error);
  });
});

describe('the readers refuse with their own problem class', () => {
  it('the doors answer HttpProblem, the emulator its ApiProblem', async () => {
    const row = BOUNDED_READ_CASES.find((r) => r.outcome === 'too-large' && r.then === 'end')!;
    await expect(webBody(request(row)).read(row.limit, timeoutFor(row))).rejects.toBeInstanceOf(HttpProblem);
    await expect(nodeBody(nodeStream(row)).read(row.limit, timeoutFor(row))).rejects.toBeInstanceOf(
      HttpProblem,
    );
  });
});

describe("the inbox console's action forms, read by the same readers", () => {
  // The action is refused before the inbox is asked: each test checks it was never called.
  const asked: string[] = [];
  const ask = (name: string) => () => void asked.push(name);
  const inbox = Object.fromEntries(
    ['status', 'deadLetters', 'replay', 'pause', 'resume'].map((name) => [name, ask(name)]),
  ) as unknown as Inbox;
  afterEach(() => expect(asked.splice(0)).toEqual([]));
  const FORM = 'application/x-www-form-urlencoded';
  const refused = { status: 400, type: 'urn:service-webhooks:problem:console-bad-form' };

  it('node:http: a form past its 8 KiB is answered 400', async () => {
    const handler = inboxConsole({ inbox, authorize: () => true, logger: false });
    const app = await listen((req: IncomingMessage, res: ServerResponse) => handler(req, res));
    try {
      const answer = await fetch(`${app.url}/actions/pause`, {
        method: 'POST',
        headers: { 'content-type': FORM },
        body: `token=${'x'.repeat(9 * 1024)}`,
      });
      expect(answer.status).toBe(400);
      expect(await answer.json()).toMatchObject(refused);
    } finally {
      handler.close();
      await app.close();
    }
  });

  it.each<[string, BoundedReadCase]>([
    [
      'past its 8 KiB',
      { name: '', chunks: ['x'.repeat(9 * 1024)], then: 'end', limit: 0, outcome: 'too-large' },
    ],
    ['that stops arriving', { name: '', chunks: ['token='], then: 'stall', limit: 0, outcome: 'timeout' }],
  ])("Fetch: a form %s is answered 400 within the receiver's body bound", async (_name, row) => {
    const handler = inboxConsoleFetch({ inbox, authorize: () => true, logger: false });
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      const answering = handler(
        new Request('http://127.0.0.1/actions/pause', {
          method: 'POST',
          headers: { 'content-type': FORM },
          body: webStream(row),
          duplex: 'half',
        } as RequestInit),
      );
      await jest.advanceTimersByTimeAsync(DEFAULT_BODY_TIMEOUT_MS);
      const answer = await answering;
      expect(answer.status).toBe(400);
      expect(await answer.json()).toMatchObject(refused);
    } finally {
      jest.useRealTimers();
      handler.close();
    }
  });
});
