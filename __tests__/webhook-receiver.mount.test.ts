import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createEventRouter, webhookReceiver } from 'service-webhooks';
import { buildEvent, deliverEvent, sendHandshake } from 'service-webhooks/testing';
import { captureLogger } from './support/capture-logger';

// `app.use('/webhooks', receiver)` answers the mounted path itself; every other sub-path falls through
// to the app's next route (issue 11: it used to answer `POST /webhooks/anything` with 200 processed).
const TOKEN = 'tok_mount';

function mountedApp(mount: string | null) {
  const handled: string[] = [];
  const router = createEventRouter().on('ag.hid_org.created', (event) => void handled.push(event.id));
  const receiver = webhookReceiver({ bearerTokens: [TOKEN], router, logger: false });
  const app = express();
  if (mount === null) app.use(receiver);
  else app.use(mount, receiver);
  // What the app itself serves next to the receiver.
  app.use((req, res) => void res.status(404).json({ fellThrough: req.originalUrl }));
  return { app, handled };
}

const deliver = (app: express.Express, path: string) =>
  deliverEvent(app, 'ag.hid_org.created', {}, { token: TOKEN, path });

describe.each([
  ['/webhooks', ['/webhooks', '/webhooks/', '/webhooks?attempt=2'], ['/webhooks/anything', '/webhooks/a/b']],
  ['/a/b', ['/a/b', '/a/b/'], ['/a/b/c', '/a/b/webhooks']],
  [null, ['/', '/?x=1'], ['/anything', '/webhooks']],
] as const)('mounted at %s', (mount, answered, passedOn) => {
  it.each(answered)('answers %s', async (path) => {
    const { app, handled } = mountedApp(mount);
    const res = await deliver(app, path).expect(200);
    expect(res.body.status).toBe('processed');
    expect(handled).toEqual([res.body.id]);
  });

  it.each(passedOn)('passes %s on to next(), unacknowledged', async (path) => {
    const { app, handled } = mountedApp(mount);
    await deliver(app, path).expect(404, { fellThrough: path });
    await sendHandshake(app, { path, challenge: 'c1' }).expect(404, { fellThrough: path });
    expect(handled).toEqual([]);
  });
});

// A request line may carry the absolute form (`POST http://host/webhooks`, RFC 9112 3.2.2): Express
// leaves `req.url` as `http://host` past the mount, which the receiver's quick look at `req.url` does
// not read as the mount point, so it asks `req.path`.
describe.each([
  ['/webhooks', 200],
  ['/webhooks/anything', 404],
] as const)('an absolute-form request line for %s', (path, status) => {
  it(`is answered ${status}`, async () => {
    const { app, handled } = mountedApp('/webhooks');
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const body = JSON.stringify(buildEvent('ag.hid_org.created'));
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: `http://127.0.0.1:${port}${path}`,
            headers: {
              'content-type': 'application/cloudevents+json',
              authorization: `Bearer ${TOKEN}`,
              connection: 'close',
            },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          },
        );
        req.setTimeout(10_000, () => req.destroy(new Error('no answer in 10 s')));
        req.on('error', reject);
        req.end(body);
      });
      expect(answer.status).toBe(status);
      if (status === 200) expect(JSON.parse(answer.body)).toMatchObject({ status: 'processed' });
      else expect(JSON.parse(answer.body)).toEqual({ fellThrough: `http://127.0.0.1:${port}${path}` });
      expect(handled).toHaveLength(status === 200 ? 1 : 0);
    } finally {
      server.close();
    }
  });
});

it('passes a sub-path on inside a nested router, whatever its own route', async () => {
  const handled: string[] = [];
  const router = createEventRouter().on('ag.hid_org.created', (event) => void handled.push(event.id));
  const api = express.Router();
  api.use('/hooks', webhookReceiver({ bearerTokens: [TOKEN], router, logger: false }));
  api.post('/hooks/status', (_req, res) => void res.json({ route: 'status' }));
  const app = express().use('/api', api);
  await deliver(app, '/api/hooks/status').expect(200, { route: 'status' });
  expect(handled).toEqual([]);
  await deliver(app, '/api/hooks').expect(200);
  expect(handled).toHaveLength(1);
});

describe('mounted behind another body parser', () => {
  function appWith(order: 'parser-first' | 'receiver-first', parser: express.RequestHandler) {
    const logger = captureLogger();
    const handled: string[] = [];
    const router = createEventRouter().on('ag.hid_org.created', (event) => void handled.push(event.id));
    const receiver = webhookReceiver({ bearerTokens: [TOKEN], router, logger });
    const app = express();
    if (order === 'parser-first') app.use(parser, receiver);
    else app.use(receiver, parser);
    return { app, handled, warnings: () => logger.records.filter((r) => r.level === 'warn') };
  }

  it.each([
    ['express.json() with a wide type', express.json({ type: '*/*' })],
    ['express.text() with a wide type', express.text({ type: '*/*' })],
    ['express.raw() with a wide type', express.raw({ type: '*/*' })],
  ])(
    'still works behind %s, and warns once that limit and auth-before-body no longer hold',
    async (_n, parser) => {
      const { app, handled, warnings } = appWith('parser-first', parser);
      for (let i = 0; i < 3; i++) await deliver(app, '/').expect(200);
      expect(handled).toHaveLength(3);
      expect(warnings().map((r) => r.message)).toEqual([
        expect.stringMatching(
          /another body parser .* read the delivery before the receiver: its size limit applies instead of ours, and the body is read before the token is checked\. Mount the receiver before that parser/,
        ),
      ]);
    },
  );

  it('says nothing when the receiver comes first', async () => {
    const { app, handled, warnings } = appWith('receiver-first', express.json({ type: '*/*' }));
    await deliver(app, '/').expect(200);
    expect(handled).toHaveLength(1);
    expect(warnings()).toEqual([]);
  });
});
