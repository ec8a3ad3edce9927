import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { createEventRouter, createNodeHandler, type Inbox } from '../lib';
import { nodeBody } from '../lib/adapters/incoming-message/node-body';
import { buildEvent } from '../lib/testing';
import { watchBodyReads } from './support/body-reads';
import { pollUntil } from './support/poll-until';
import { postHead, rawSocket, wireServer } from './support/wire-server';

const TOKEN = 'tok_node_body';

describe('reading a node:http body, byte by byte on the wire', () => {
  it('answers 408 with Connection: close to a body that stops arriving, within bodyTimeoutMs', async () => {
    const s = await wireServer(TOKEN, { bodyTimeoutMs: 150 });
    const client = rawSocket(s.port);
    try {
      client.write(postHead(TOKEN, '/', 1000));
      client.write('{"specversion":');
      await pollUntil('the 408 arrived', () => /\r\n\r\n.*body-timeout/s.test(client.received()), {
        describe: () => client.received().slice(0, 200),
      });
      expect(client.received()).toMatch(/^HTTP\/1.1 408/);
      expect(client.received()).toMatch(/connection: close/i);
      expect(client.received()).toContain('urn:service-webhooks:problem:body-timeout');
    } finally {
      client.close();
      s.close();
    }
  });

  // node's parser refuses a body that disagrees with its Content-Length, unless the server was made
  // with insecureHTTPParser (or --insecure-http-parser, for old proxies): then a chunked body beside a
  // Content-Length is let through, the shape of a smuggled request, and the receiver refuses it itself.
  it('answers 400 to a chunked body that disagrees with its Content-Length (insecureHTTPParser)', async () => {
    let runs = 0;
    const s = await wireServer(
      TOKEN,
      { router: createEventRouter().onAny(() => void runs++) },
      { insecureHTTPParser: true },
    );
    const body = JSON.stringify(buildEvent('ag.hid_org.created'));
    const client = rawSocket(s.port);
    try {
      const chunked = `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;
      client.write(
        postHead(TOKEN, '/', Buffer.byteLength(body) + 10, 'Transfer-Encoding: chunked\r\n') + chunked,
      );
      await pollUntil('the receiver answered the mismatched body', () => client.received().includes('}'), {
        describe: () => JSON.stringify(client.received()),
      });
      expect(client.received()).toMatch(/^HTTP\/1.1 400/);
      expect(client.received()).toMatch(/connection: close/i);
      expect(client.received()).toContain('urn:service-webhooks:problem:body-length-mismatch');
      expect(runs).toBe(0);
    } finally {
      client.close();
      s.close();
    }
  });
});

/** A request stream the test drives: headers, the events it emits, and whether it was paused. */
function fakeStream(headers: Record<string, string>) {
  const emitter = new EventEmitter();
  let paused = false;
  const stream = Object.assign(emitter, { headers, pause: () => ((paused = true), emitter) });
  const listening = () => ['data', 'end', 'error', 'close'].map((e) => emitter.listenerCount(e));
  // The few members nodeBody reads of an IncomingMessage.
  const request = stream as unknown as Parameters<typeof nodeBody>[0];
  return { stream, request, paused: () => paused, listening };
}

const slugOf = (error: unknown) => (error as { slug?: string }).slug;

describe('nodeBody.read: one settlement per read', () => {
  const cases: {
    name: string;
    headers: Record<string, string>;
    emit: (s: EventEmitter) => void;
    slug: string | null;
    paused: boolean;
  }[] = [
    {
      name: 'a whole body',
      headers: { 'content-length': '4' },
      emit: (s) => (s.emit('data', Buffer.from('{"a"')), s.emit('end')),
      slug: null,
      paused: false,
    },
    {
      name: 'a body then a late close and error',
      headers: { 'content-length': '2' },
      emit: (s) => (
        s.emit('data', Buffer.from('{}')),
        s.emit('end'),
        s.emit('close'),
        s.emit('error', new Error('late'))
      ),
      slug: null,
      paused: false,
    },
    {
      name: 'close before end',
      headers: { 'content-length': '10' },
      emit: (s) => (s.emit('data', Buffer.from('{}')), s.emit('close'), s.emit('end')),
      slug: 'body-aborted',
      paused: true,
    },
    {
      name: 'an error',
      headers: {},
      emit: (s) => (s.emit('error', new Error('reset')), s.emit('close')),
      slug: 'body-unreadable',
      paused: true,
    },
    {
      name: 'past the limit',
      headers: { 'transfer-encoding': 'chunked' },
      emit: (s) => (s.emit('data', Buffer.alloc(6)), s.emit('data', Buffer.alloc(6)), s.emit('end')),
      slug: 'payload-too-large',
      paused: true,
    },
    {
      name: 'shorter than its Content-Length',
      headers: { 'content-length': '5' },
      emit: (s) => (s.emit('data', Buffer.from('{}')), s.emit('end')),
      slug: 'body-length-mismatch',
      paused: false,
    },
  ];

  it.each(cases)('$name: settles once, as $slug', async ({ headers, emit, slug, paused }) => {
    const { stream, request, paused: wasPaused, listening } = fakeStream(headers);
    const reading = nodeBody(request).read(10, 60_000);
    // The read begins a microtask later (a body already buffered is taken whole then).
    await null;
    expect(listening()).toEqual([1, 1, 1, 1]);
    emit(stream);
    const outcome = await reading.then(
      (bytes) => ({ bytes: Buffer.from(bytes).toString() }),
      (error: unknown) => ({ slug: slugOf(error) }),
    );
    expect(outcome).toEqual(slug === null ? { bytes: expect.any(String) } : { slug });
    expect(wasPaused()).toBe(paused);
    // A failed read lets go of the stream; a read body keeps its listeners, which do nothing more.
    expect(listening()).toEqual(paused ? [0, 0, 0, 0] : [1, 1, 1, 1]);
  });

  it('times out a body that stops arriving, once, and its deadline no longer holds the process', async () => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const { stream, request, paused, listening } = fakeStream({ 'content-length': '10' });
    const reading = nodeBody(request).read(10, 50);
    await null;
    stream.emit('data', Buffer.from('{"a":'));
    await expect(reading).rejects.toMatchObject({ slug: 'body-timeout' });
    expect([paused(), listening()]).toEqual([true, [0, 0, 0, 0]]);
    stream.emit('end');
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(before);
  });

  it('a read body leaves no deadline holding the process', async () => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const { stream, request } = fakeStream({ 'content-length': '2' });
    const reading = nodeBody(request).read(10, 60_000);
    await null;
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(before + 1);
    stream.emit('data', Buffer.from('{}'));
    stream.emit('end');
    await expect(reading).resolves.toEqual(Buffer.from('{}'));
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(before);
  });
});

/** A request stream whose body node has already buffered: a Readable holding `body`, unread. */
function bufferedStream(headers: Record<string, string>, body: string) {
  const readable = new Readable({ read: () => undefined });
  readable.push(Buffer.from(body));
  const stream = Object.assign(readable, { headers });
  const listening = () => ['data', 'end', 'error', 'close'].map((e) => readable.listenerCount(e));
  return { stream, request: stream as unknown as Parameters<typeof nodeBody>[0], listening };
}

describe('nodeBody.read: a body already buffered', () => {
  const cases: { name: string; headers: Record<string, string>; whole: boolean }[] = [
    { name: 'all of its Content-Length', headers: { 'content-length': '7' }, whole: true },
    // A chunked body may go on past what is buffered; a shorter one is still arriving.
    {
      name: 'chunked beside a Content-Length',
      headers: { 'content-length': '7', 'transfer-encoding': 'chunked' },
      whole: false,
    },
    { name: 'part of its Content-Length', headers: { 'content-length': '9' }, whole: false },
    { name: 'no Content-Length', headers: { 'transfer-encoding': 'chunked' }, whole: false },
  ];

  it.each(cases)('$name: taken whole without listeners: $whole', async ({ headers, whole }) => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const { stream, request, listening } = bufferedStream(headers, '{"a":1}');
    const reading = nodeBody(request).read(100, 60_000);
    await null;
    await null;
    const timers = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length - before;
    expect({ listening: listening(), timers }).toEqual(
      whole ? { listening: [0, 0, 0, 0], timers: 0 } : { listening: [1, 1, 1, 1], timers: 1 },
    );
    if (whole) {
      await expect(reading).resolves.toEqual(Buffer.from('{"a":1}'));
      return;
    }
    stream.push(headers['content-length'] === '9' ? Buffer.from('{}') : null);
    if (headers['content-length'] === '9') stream.push(null);
    await expect(reading.then((bytes) => Buffer.from(bytes).toString())).resolves.toBe(
      headers['content-length'] === '9' ? '{"a":1}{}' : '{"a":1}',
    );
  });

  // Its 'close' came while the token was checked (a bearerTokens function awaits): no event will.
  it('a stream closed before the read began is an aborted body, not a wait for the timeout', async () => {
    const { stream, request } = bufferedStream({ 'content-length': '20' }, '{"a":1}');
    stream.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    await expect(nodeBody(request).read(100, 2_000)).rejects.toMatchObject({ slug: 'body-aborted' });
  });
});

describe('nodeBody.readNow: a body already buffered, taken without a promise', () => {
  const cases: {
    name: string;
    headers: Record<string, string>;
    body: string;
    limit: number;
    now: string | undefined | 'payload-too-large';
  }[] = [
    {
      name: 'all of its Content-Length',
      headers: { 'content-length': '7' },
      body: '{"a":1}',
      limit: 100,
      now: '{"a":1}',
    },
    { name: 'an empty body', headers: { 'content-length': '0' }, body: '', limit: 100, now: '' },
    {
      name: 'part of its Content-Length',
      headers: { 'content-length': '9' },
      body: '{"a":1}',
      limit: 100,
      now: undefined,
    },
    {
      name: 'chunked beside a Content-Length',
      headers: { 'content-length': '7', 'transfer-encoding': 'chunked' },
      body: '{"a":1}',
      limit: 100,
      now: undefined,
    },
    {
      name: 'no Content-Length',
      headers: { 'transfer-encoding': 'chunked' },
      body: '{"a":1}',
      limit: 100,
      now: undefined,
    },
    // Refused on its declared length, as read() refuses it, nothing taken.
    {
      name: 'a Content-Length over the limit',
      headers: { 'content-length': '7' },
      body: '{"a":1}',
      limit: 6,
      now: 'payload-too-large',
    },
  ];

  it.each(cases)('$name: $now', ({ headers, body, limit, now }) => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const { stream, request, listening } = bufferedStream(headers, body);
    const source = nodeBody(request);
    if (now === 'payload-too-large') {
      expect(() => source.readNow?.(limit)).toThrow(expect.objectContaining({ slug: 'payload-too-large' }));
      expect(stream.readableLength).toBe(Buffer.byteLength(body));
    } else {
      const bytes = source.readNow?.(limit);
      expect(bytes === undefined ? undefined : Buffer.from(bytes).toString()).toBe(now);
      // What it leaves is still there for read().
      expect(stream.readableLength).toBe(now === undefined ? Buffer.byteLength(body) : 0);
    }
    expect(listening()).toEqual([0, 0, 0, 0]);
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(before);
  });
});

describe('reading a buffered body on the wire', () => {
  it('the node door takes a body sent with its head at once (readNow), never waiting on a read', async () => {
    const watch = watchBodyReads();
    const s = await wireServer(TOKEN);
    const client = rawSocket(s.port);
    try {
      for (const id of ['evt-now-1', 'evt-now-2']) {
        const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id }));
        // Head and body in one write: on loopback they arrive in one packet.
        client.write(postHead(TOKEN, '/', Buffer.byteLength(body)) + body);
        await pollUntil(`${id} answered`, () => client.received().includes(`"id":"${id}"`), {
          describe: () => client.received().slice(-300),
        });
      }
      expect(client.received().match(/HTTP\/1.1 200 /g)).toHaveLength(2);
      expect(watch.taken).toEqual({ now: 2, read: 0 });
    } finally {
      watch.restore();
      client.close();
      s.close();
    }
  });

  it('the node door writes a delivery answered at once in the microtask it began in: no promise turn before the write', async () => {
    const handler = createNodeHandler({ bearerTokens: [TOKEN], router: createEventRouter(), logger: false });
    // Whether the answer was already written when a microtask queued just after the door's own ran.
    const sentBefore: boolean[] = [];
    const srv = http.createServer((req, res) => {
      void handler(req, res);
      queueMicrotask(() => sentBefore.push(res.headersSent));
    });
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const client = rawSocket((srv.address() as AddressInfo).port);
    try {
      const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt-same-turn' }));
      client.write(postHead(TOKEN, '/', Buffer.byteLength(body)) + body);
      await pollUntil('answered', () => client.received().includes('"id":"evt-same-turn"'), {
        describe: () => client.received().slice(-300),
      });
      expect(client.received()).toMatch(/^HTTP\/1.1 200 /);
      expect(sentBefore).toEqual([true]);
    } finally {
      client.close();
      srv.closeAllConnections();
      srv.close();
    }
  });

  // The acknowledgement of a queued delivery is written in the core's own continuation: once the
  // enqueue settles, the bound, the claim's settle, the record and the write share turns, none of
  // them a .then of its own (there were 6 turns before the write, each held by every request in flight).
  it('the node door writes a queued delivery within 2 microtask turns of its enqueue settling', async () => {
    let release: (() => void) | undefined;
    const inbox = {
      engine: 'own',
      name: 'own',
      enqueue: () => new Promise<void>((resolve) => (release = resolve)),
      startWorker: () => Promise.reject(new Error('not here')),
      deadLetters: async () => [],
      replay: async () => 0,
    } as unknown as Inbox;
    const handler = createNodeHandler({
      bearerTokens: [TOKEN],
      router: createEventRouter(),
      logger: false,
      inbox,
    });
    let response: http.ServerResponse | undefined;
    const srv = http.createServer((req, res) => {
      response = res;
      void handler(req, res);
    });
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const client = rawSocket((srv.address() as AddressInfo).port);
    try {
      const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt-queued-turns' }));
      client.write(postHead(TOKEN, '/', Buffer.byteLength(body)) + body);
      await pollUntil('the enqueue called', () => release !== undefined);
      expect(response?.headersSent).toBe(false);
      release?.();
      let turns = 0;
      while (response?.headersSent !== true && turns < 50) {
        await Promise.resolve();
        turns++;
      }
      await pollUntil('answered', () => client.received().includes('"id":"evt-queued-turns"'), {
        describe: () => client.received().slice(-300),
      });
      expect(client.received()).toMatch(/^HTTP\/1.1 200 /);
      expect(turns).toBeLessThanOrEqual(2);
    } finally {
      client.close();
      srv.closeAllConnections();
      srv.close();
    }
  });

  it('the node door still reads a body that comes after its head', async () => {
    const watch = watchBodyReads();
    const s = await wireServer(TOKEN);
    const client = rawSocket(s.port);
    try {
      const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt-later' }));
      client.write(postHead(TOKEN, '/', Buffer.byteLength(body)));
      await pollUntil('the read began', () => watch.taken.read === 1);
      client.write(body);
      await pollUntil('answered', () => client.received().includes('"id":"evt-later"'), {
        describe: () => client.received().slice(-300),
      });
      expect(client.received()).toMatch(/^HTTP\/1.1 200 /);
      expect(watch.taken).toEqual({ now: 0, read: 1 });
    } finally {
      watch.restore();
      client.close();
      s.close();
    }
  });

  it('answers every delivery of a keep-alive connection, each body sent with its head', async () => {
    const ids: string[] = [];
    const s = await wireServer(TOKEN, {
      router: createEventRouter().onAny((event) => void ids.push(event.id)),
    });
    const client = rawSocket(s.port);
    try {
      for (const id of ['evt-wire-1', 'evt-wire-2', 'evt-wire-3']) {
        const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id }));
        client.write(postHead(TOKEN, '/', Buffer.byteLength(body)) + body);
        await pollUntil(`${id} answered`, () => client.received().includes(`"id":"${id}"`), {
          describe: () => client.received().slice(-300),
        });
      }
      expect(client.received().match(/HTTP\/1.1 200 /g)).toHaveLength(3);
      expect(client.received()).not.toMatch(/connection: close/i);
      expect(ids).toEqual(['evt-wire-1', 'evt-wire-2', 'evt-wire-3']);
    } finally {
      client.close();
      s.close();
    }
  });
});
