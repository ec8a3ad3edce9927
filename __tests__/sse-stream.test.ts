import http from 'node:http';
import net from 'node:net';
import { EmulatorClient } from '../lib/cli/emulator-client';
import { createEmulator, type Emulator } from '../lib/emulator';
import { MAX_STREAM_BUFFER } from '../lib/emulator/sse-stream';

let emulator: Emulator;
const sockets: net.Socket[] = [];
beforeEach(async () => {
  emulator = await createEmulator({ logger: false });
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await emulator.close();
});

/** Opens the stream over a raw socket; resolves with the socket once the answer's head arrived. */
function openStream(headers: Record<string, string> = {}): Promise<{ socket: net.Socket; head: string }> {
  const { port } = new URL(emulator.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    sockets.push(socket);
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.off('data', onData);
      socket.pause();
      resolve({ socket, head: text.slice(0, end) });
    };
    socket.on('data', onData);
    socket.on('error', reject);
    const extra = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(`GET /_emulator/stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${extra}\r\n`);
  });
}

function get(
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${emulator.url}${path}`, { headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }),
      );
    });
    req.on('error', reject);
    // A stream that is served never ends: bounded, so a test of a refusal fails fast instead.
    req.setTimeout(2000, () => req.destroy(new Error('no complete answer within 2 s')));
  });
}

describe('the emulator stream', () => {
  it.each([
    [
      'Sec-Fetch-Site: cross-site (an iframe or EventSource on another site)',
      { 'sec-fetch-site': 'cross-site' },
    ],
    ['Sec-Fetch-Site: same-site (another port of localhost)', { 'sec-fetch-site': 'same-site' }],
    ['an Origin that is not the emulator', { origin: 'http://evil.test' }],
  ])('refuses a request with %s (403 problem+json)', async (_name, headers) => {
    const stream = await get('/_emulator/stream', headers);
    expect([stream.status, stream.type]).toEqual([403, 'application/problem+json; charset=utf-8']);
    expect((await get('/_emulator/state', headers)).status).toBe(403);
  });

  it("takes the emulator's own pages and local tools", async () => {
    const { port } = new URL(emulator.url);
    const cases: Record<string, string>[] = [
      {},
      { 'sec-fetch-site': 'same-origin', origin: `http://localhost:${port}` },
      { 'sec-fetch-site': 'none' },
    ];
    for (const headers of cases) {
      const { head } = await openStream(headers);
      expect(head).toMatch(/^HTTP\/1.1 200/);
    }
  });

  it('says "busy" (503 problem+json, Retry-After) past 32 streams, and listen says so too', async () => {
    for (let i = 0; i < 32; i++) expect((await openStream()).head).toMatch(/^HTTP\/1.1 200/);
    const { head, socket } = await openStream();
    expect(head).toMatch(/^HTTP\/1.1 503/);
    expect(head).toMatch(/\r\nRetry-After: 5\r\n/i);
    expect(head).toMatch(/\r\nContent-Type: application\/problem\+json/i);
    socket.destroy();
    const client = new EmulatorClient(emulator.url);
    await expect(client.follow(() => undefined, AbortSignal.timeout(5000))).rejects.toThrow(/busy/);
  });

  it('drops a stream that stops reading once it holds more than its bound, instead of buffering every change', async () => {
    const { socket } = await openStream();
    const pad = 'x'.repeat(100_000);
    const EVENTS = 300;
    for (let i = 0; i < EVENTS; i++) emulator.emit('ag.access_pass.issued', { metadata: { pad } });
    let received = 0;
    const closed = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 10_000);
      socket.on('close', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.resume();
    expect(await closed).toBe(true);
    // What the kernel's socket buffers held, plus at most the bound: far from every change.
    expect(received).toBeLessThan(EVENTS * pad.length * 0.5);
    expect(MAX_STREAM_BUFFER).toBeLessThanOrEqual(4 * 1024 * 1024);
    console.log(
      `slow stream: dropped after ${(received / 1e6).toFixed(1)} MB of ${((EVENTS * pad.length) / 1e6).toFixed(0)} MB`,
    );
  });
});
