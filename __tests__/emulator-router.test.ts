import net from 'node:net';
import { DEFAULT_BODY_TIMEOUT_MS } from '../lib/default-body-timeout';
import { createEmulator, type Emulator } from '../lib/emulator';

/*
 * The emulator's body reading, over a raw socket (issue 28): a body it stops reading (too large, too
 * slow) is answered with Connection: close and the socket ended, and a body that trickles is cut at
 * the receiver's bound, not Node's 300 s.
 */

let emulator: Emulator;
let port: number;
beforeAll(async () => {
  emulator = await createEmulator({ logger: false });
  port = Number(new URL(emulator.url).port);
});
afterAll(() => emulator.close());

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Whether the server ended the socket (before the test's own bound gave up waiting). */
  ended: boolean;
  /** Body bytes the client had written when the answer came. */
  sent: number;
}

/**
 * Writes `head`, then `body` pieces every `everyMs` (at most all of them) until the server answers;
 * resolves once the server ends the socket, or after `boundMs` with `ended: false`.
 */
function rawPost(
  head: string,
  pieces: readonly string[],
  everyMs: number,
  boundMs: number,
): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let sent = 0;
    let answeredAt: number | undefined;
    let next = 0;
    const writer = setInterval(() => {
      if (answeredAt !== undefined || next >= pieces.length) return clearInterval(writer);
      const piece = pieces[next++] as string;
      socket.write(piece);
      sent += Buffer.byteLength(piece);
    }, everyMs);
    const finish = (ended: boolean) => {
      clearInterval(writer);
      clearTimeout(bound);
      socket.destroy();
      const text = Buffer.concat(received).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({
        status: Number(statusLine.split(' ')[1]),
        headers,
        body: text.slice(split + 4),
        ended,
        sent: answeredAt ?? sent,
      });
    };
    const bound = setTimeout(() => finish(false), boundMs);
    socket.on('data', (chunk) => {
      answeredAt ??= sent;
      received.push(chunk);
    });
    socket.on('end', () => finish(true));
    socket.on('error', () => finish(true));
    socket.write(head);
  });
}

/** A POST to the control API framed by `framing` (called in a test: the port is known by then). */
const head = (framing: string) =>
  `POST /_emulator/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`;
const kib = (n: number) => 'x'.repeat(n * 1024);

describe('the emulator stops reading a body, and closes the connection', () => {
  it.each<[string, string, string[]]>([
    ['declared too large', 'Content-Length: 10485760', [kib(64)]],
    [
      'streamed past the limit',
      'Transfer-Encoding: chunked',
      Array.from({ length: 6 }, () => `10000\r\n${kib(64)}\r\n`),
    ],
  ])(
    '%s: 413, Connection: close, the socket ended',
    async (_name, framing, pieces) => {
      const answer = await rawPost(head(framing), pieces, 20, 15_000);
      expect(answer.status).toBe(413);
      expect(answer.headers).toMatchObject({
        connection: 'close',
        'content-type': 'application/problem+json; charset=utf-8',
      });
      expect(JSON.parse(answer.body)).toMatchObject({ type: 'urn:service-webhooks:problem:body-too-large' });
      expect(answer.ended).toBe(true);
    },
    30_000,
  );

  it("a body that trickles is cut at the receiver's bound: 408, Connection: close, the socket ended", async () => {
    // 100 bytes declared, one sent every 400 ms: all of them would take 40 s, Node's own bound 300 s.
    const answer = await rawPost(head('Content-Length: 100'), Array(100).fill('x'), 400, 35_000);
    expect(answer.status).toBe(408);
    expect(answer.headers).toMatchObject({ connection: 'close' });
    expect(JSON.parse(answer.body)).toMatchObject({
      type: 'urn:service-webhooks:problem:body-timeout',
      detail: `The body did not arrive within ${DEFAULT_BODY_TIMEOUT_MS} ms.`,
    });
    expect(answer.sent).toBeLessThan(100);
    expect(answer.ended).toBe(true);
  }, 45_000);
});
