import http from 'node:http';
import { CloudEvent, HTTP } from 'cloudevents';
import express from 'express';
import request from 'supertest';
import { getWebhookEvent, OptionsError, problemHandler, readCloudEvent, type AnyWebhookEvent } from '../lib';
import { buildEvent } from '../lib/testing';
import { listen } from './support/listen';

const CE = 'application/cloudevents+json';

function appWith(options: Parameters<typeof readCloudEvent>[0] = {}, before: express.RequestHandler[] = []) {
  const app = express();
  const seen: AnyWebhookEvent[] = [];
  if (before.length > 0) app.use(...before);
  app.post('/', readCloudEvent({ logger: false, ...options }), (_req, res) => {
    seen.push(getWebhookEvent(res));
    res.status(200).json({ ok: true });
  });
  app.use(problemHandler({ logger: false }));
  return { app, seen };
}

const valid = () => buildEvent('ag.card_template.created');
const post = (app: express.Express, body: unknown, type = CE) =>
  request(app)
    .post('/')
    .set('Content-Type', type)
    .send(typeof body === 'string' ? body : JSON.stringify(body));

describe('readCloudEvent: content type', () => {
  it.each([
    ['application/cloudevents+json'],
    ['application/json'],
    ['Application/CloudEvents+JSON'],
    ['application/cloudevents+json; charset=utf-8'],
    ['application/json; charset=UTF-8; foo=bar'],
  ])('accepts %s', async (type) => {
    const { app, seen } = appWith();
    await post(app, valid(), type).expect(200);
    expect(seen).toHaveLength(1);
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['application/xml', 'application/xml'],
    ['a charset other than UTF-8', 'application/json; charset=iso-8859-1'],
    ['an unparsable header', 'application/'],
  ])('answers 415 for %s', async (_name, type) => {
    const { app, seen } = appWith();
    const res = await post(app, valid(), type).expect(415);
    expect(res.body.detail).toContain('application/cloudevents+json or application/json');
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(seen).toHaveLength(0);
  });

  it('answers 415 without a Content-Type', async () => {
    const { app, seen } = appWith();
    await request(app)
      .post('/')
      .send(Buffer.from(JSON.stringify(valid())))
      .unset('Content-Type')
      .expect(415);
    expect(seen).toHaveLength(0);
  });
});

describe('readCloudEvent: size limit', () => {
  it('answers 413 past the limit when Content-Length says so', async () => {
    const { app, seen } = appWith({ limit: 1024 });
    const res = await post(
      app,
      buildEvent('ag.card_template.created', { metadata: { pad: 'x'.repeat(2000) } }),
    ).expect(413);
    expect(res.body).toMatchObject({ status: 413, title: 'Content Too Large' });
    expect(seen).toHaveLength(0);
  });

  it('stops reading a chunked body once it passes the limit', async () => {
    const { app, seen } = appWith({ limit: '16kb' });
    const server = await listen(app);
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request({
          host: '127.0.0.1',
          port: server.port,
          method: 'POST',
          headers: { 'content-type': CE },
        });
        req.on('response', (res) => resolve(res.statusCode ?? 0));
        req.on('error', reject);
        req.write('{"pad":"');
        const chunk = 'x'.repeat(8 * 1024);
        let sent = 0;
        const timer = setInterval(() => {
          if (sent++ > 200) return clearInterval(timer);
          req.write(chunk);
        }, 1);
        req.on('response', () => clearInterval(timer));
      });
      expect(status).toBe(413);
      expect(seen).toHaveLength(0);
    } finally {
      await server.close();
    }
  });

  it('accepts a body exactly at the limit', async () => {
    const body = JSON.stringify(valid());
    const { app } = appWith({ limit: Buffer.byteLength(body) });
    await post(app, body).expect(200);
  });

  it.each([[0], [-1], ['lots'], [1.5], [{}]])('throws at construction for limit %p', (limit) => {
    expect(() => readCloudEvent({ limit: limit as never })).toThrow(OptionsError);
  });
});

describe('readCloudEvent: bodies other parsers already read', () => {
  it.each([
    ['express.json() with a wide type', express.json({ type: '*/*' })],
    ['express.text() with a wide type', express.text({ type: '*/*' })],
    ['express.raw() with a wide type', express.raw({ type: '*/*' })],
    ['express.json() with its default type', express.json()],
    ['express.urlencoded()', express.urlencoded({ extended: false })],
  ])('uses req.body as %s left it', async (_name, parser) => {
    const { app, seen } = appWith({}, [parser]);
    const event = valid();
    await post(app, event).expect(200);
    await post(app, event, 'application/json').expect(200);
    expect(seen.map((e) => e.id)).toEqual([event.id, event.id]);
  });

  it('answers 400, not a hang, when a middleware consumed the body and kept nothing', async () => {
    const swallow: express.RequestHandler = (req, _res, next) => {
      req.resume();
      req.on('end', () => next());
    };
    const { app, seen } = appWith({}, [swallow]);
    const res = await post(app, valid()).expect(400);
    expect(res.body.detail).toMatch(/read by another middleware/);
    expect(seen).toHaveLength(0);
  });
});

describe('readCloudEvent: JSON and the envelope', () => {
  it.each([
    ['an empty body', '', /empty/],
    ['invalid JSON', '{"specversion": "1.0",', /not valid JSON: .*position|not valid JSON: .*end/i],
    ['a trailing comma', '{"a": 1,}', /not valid JSON: .*position/],
    ['an array (batch)', '[{"specversion":"1.0"}]', /batch mode is not supported/],
    ['a number', '42', /batch mode is not supported/],
    ['a string', '"event"', /got a JSON string/],
    ['null', 'null', /got a JSON null/],
  ])('answers 400 for %s', async (_name, body, detail) => {
    const { app, seen } = appWith();
    const res = await post(app, body).expect(400);
    expect(res.body.detail).toMatch(detail);
    expect(seen).toHaveLength(0);
  });

  const base = () => valid() as unknown as Record<string, unknown>;
  it.each<[string, (e: Record<string, unknown>) => void, string, RegExp]>([
    ['specversion 0.3', (e) => (e.specversion = '0.3'), 'specversion', /exactly "1.0"/],
    ['specversion missing', (e) => delete e.specversion, 'specversion', /is required/],
    ['id missing', (e) => delete e.id, 'id', /is required/],
    ['id empty', (e) => (e.id = ''), 'id', /non-empty/],
    ['id a number', (e) => (e.id = 7), 'id', /non-empty string/],
    ['source empty', (e) => (e.source = ''), 'source', /non-empty/],
    ['type missing', (e) => delete e.type, 'type', /is required/],
    ['time not RFC 3339', (e) => (e.time = '22/11/2026'), 'time', /RFC 3339/],
    ['time without offset', (e) => (e.time = '2026-11-22T10:00:00'), 'time', /RFC 3339/],
    ['dataschema not a URI', (e) => (e.dataschema = 'not a uri'), 'dataschema', /URI/],
    ['an upper-case extension', (e) => (e.traceParent = 'x'), 'traceParent', /extension attribute/],
    ['a 21-character extension', (e) => (e.abcdefghijklmnopqrstu = 'x'), 'abcdefghijklmnopqrstu', /1 to 20/],
    ['data and data_base64', (e) => (e.data_base64 = 'e30='), 'data_base64', /together with data/],
  ])('answers 400 naming the attribute: %s', async (_name, mutate, field, rule) => {
    const { app, seen } = appWith();
    const event = base();
    mutate(event);
    const res = await post(app, event).expect(400);
    expect(res.body.field).toBe(field);
    expect(res.body.detail).toMatch(rule);
    expect(res.body.detail).toContain(`"${field}"`);
    expect(seen).toHaveLength(0);
  });

  it('accepts valid extension attributes and keeps them in raw', async () => {
    const { app, seen } = appWith();
    await post(app, { ...base(), traceparent: '00-abc', partitionkey: 'p1' }).expect(200);
    expect(seen[0]?.raw).toMatchObject({ traceparent: '00-abc', partitionkey: 'p1' });
  });

  it('accepts data sent as data_base64', async () => {
    const { app, seen } = appWith();
    const { data, ...event } = buildEvent('ag.account_balance.low');
    await post(app, { ...event, data_base64: Buffer.from(JSON.stringify(data)).toString('base64') }).expect(
      200,
    );
    expect(seen[0]?.data).toMatchObject({ current_balance: 42.5 });
  });

  it('never lets __proto__ or constructor keys reach Object.prototype', async () => {
    const { app, seen } = appWith();
    const body = JSON.stringify(valid()).replace(
      '"metadata":{',
      '"metadata":{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted2":"yes"}},',
    );
    const envelope = body.replace(/^\{/, '{"__proto__":{"polluted3":"yes"},');
    for (const parser of [undefined, express.json({ type: '*/*' })]) {
      const app2 = parser ? appWith({}, [parser]).app : app;
      await post(app2, envelope).expect(200);
    }
    const probe = {} as Record<string, unknown>;
    expect(probe.polluted).toBeUndefined();
    expect(probe.polluted2).toBeUndefined();
    expect(probe.polluted3).toBeUndefined();
    expect(Object.hasOwn(seen[0]?.data.metadata ?? {}, '__proto__')).toBe(false);
  });
});

describe('readCloudEvent: the SDK and res.locals', () => {
  it('accepts a delivery built by the cloudevents SDK unchanged', async () => {
    const { app, seen } = appWith();
    const sdkEvent = new CloudEvent({
      type: 'ag.account_balance.low',
      source: '/service/access-grid',
      dataschema: 'https://service.example/schemas/account_balance/v1.0.0.json',
      datacontenttype: 'application/json',
      data: {
        account_id: 'a1',
        organization_name: 'Acme',
        current_balance: 1,
        threshold: 10,
        amount_below_threshold: 9,
      },
    });
    const { headers, body } = HTTP.structured(sdkEvent);
    await request(app)
      .post('/')
      .set(headers as Record<string, string>)
      .send(body as string)
      .expect(200);
    expect(seen[0]).toMatchObject({ id: sdkEvent.id, type: 'ag.account_balance.low', layout: 'A' });
  });

  it('getWebhookEvent throws a helpful error when readCloudEvent did not run', () => {
    expect(() => getWebhookEvent({ locals: {} } as express.Response)).toThrow(/mount readCloudEvent\(\)/);
  });

  it('throws at construction for an unknown validation mode', () => {
    expect(() => readCloudEvent({ validation: 'loose' as never })).toThrow(
      /validation must be 'strict' or 'lenient'/,
    );
  });
});
