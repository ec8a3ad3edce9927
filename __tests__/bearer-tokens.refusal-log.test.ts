import express from 'express';
import request from 'supertest';
import { createEventRouter, webhookReceiver } from 'service-webhooks';
import { buildEvent, deliverEvent, sendEvent, sendHandshake } from 'service-webhooks/testing';
import { captureLogger } from './support/capture-logger';

// Refused deliveries leave a trace (issue 11): one warning per reason per minute, with how many were
// held back since, and never the token.
const GOOD = 'tok_CONFIGURED_secret_1';
const WRONG = 'tok_PRESENTED_wrong_2';
const MINUTE = 60_000;

let clockOffset = 0;
beforeEach(() => {
  clockOffset = 0;
  const now = Date.now.bind(Date);
  jest.spyOn(Date, 'now').mockImplementation(() => now() + clockOffset);
});
afterEach(() => jest.restoreAllMocks());

function setup(options: { limit?: string; requireTokenOnHandshake?: boolean } = {}) {
  const logger = captureLogger();
  const handled: string[] = [];
  const router = createEventRouter().on('ag.hid_org.created', (event) => void handled.push(event.id));
  const app = express().use(webhookReceiver({ bearerTokens: [GOOD], router, logger, ...options }));
  const warnings = () => logger.records.filter((r) => r.level === 'warn');
  return { app, logger, warnings, handled };
}

describe('refused deliveries are logged at warn, rate-limited per reason', () => {
  it('logs one line per reason per minute, then one with the count held back', async () => {
    const { app, warnings, logger, handled } = setup();
    for (let i = 0; i < 5; i++)
      await deliverEvent(app, 'ag.hid_org.created', {}, { token: WRONG }).expect(401);
    for (let i = 0; i < 3; i++) await deliverEvent(app, 'ag.hid_org.created').expect(401);
    expect(warnings().map((r) => r.meta.reason)).toEqual(['token-invalid', 'token-missing']);
    expect(warnings()[0]?.message).toBe(
      '[service-webhooks] refused a delivery: bearer token invalid; the Service will retry it and drop it after 6 hours',
    );

    clockOffset = MINUTE - 1_000; // still within the minute: nothing more
    await deliverEvent(app, 'ag.hid_org.created', {}, { token: WRONG }).expect(401);
    expect(warnings()).toHaveLength(2);

    clockOffset = MINUTE + 1_000; // a minute later: one line, with the 5 held back since the last
    await deliverEvent(app, 'ag.hid_org.created', {}, { token: WRONG }).expect(401);
    expect(warnings()).toHaveLength(3);
    expect(warnings()[2]?.meta).toMatchObject({ reason: 'token-invalid', suppressedSinceLast: 5 });

    expect(handled).toEqual([]);
    const everything = JSON.stringify(logger.records);
    expect(everything).not.toContain(GOOD);
    expect(everything).not.toContain(WRONG);
  });

  it('counts other refusals under their own reasons: too large, wrong content type, bad JSON', async () => {
    const { app, warnings, handled } = setup({ limit: '1kb' });
    const big = buildEvent('ag.hid_org.created', { metadata: { pad: 'x'.repeat(2000) } });
    const post = (type: string, body: string) =>
      request(app).post('/').set('Authorization', `Bearer ${GOOD}`).set('Content-Type', type).send(body);
    for (let i = 0; i < 3; i++) {
      await sendEvent(app, big, { token: GOOD }).expect(413);
      await post('text/plain', 'hello').expect(415);
      await post('application/cloudevents+json', '{not json').expect(400);
    }
    const reasons = warnings().map((r) => r.meta.reason);
    expect(reasons).toHaveLength(3);
    expect(new Set(reasons).size).toBe(3);
    for (const record of warnings()) {
      expect(record.message).toMatch(/^\[service-webhooks\] refused a delivery: /);
      expect(record.meta).toHaveProperty('status');
    }
    expect(handled).toEqual([]);
  });

  it('logs a debug line per acknowledged delivery, and nothing at warn', async () => {
    const { app, warnings, logger } = setup();
    const res = await deliverEvent(app, 'ag.hid_org.created', {}, { token: GOOD }).expect(200);
    expect(warnings()).toEqual([]);
    expect(logger.records.filter((r) => r.level === 'debug')).toEqual([
      {
        level: 'debug',
        message: '[service-webhooks] acknowledged a delivery',
        meta: { eventId: res.body.id, type: 'ag.hid_org.created', outcome: 'processed' },
      },
    ]);
  });
});

describe('refused handshakes are logged, saying why', () => {
  it('names a missing token and a wrong one differently, never the token', async () => {
    const { app, warnings, logger } = setup({ requireTokenOnHandshake: true });
    await sendHandshake(app, { challenge: 'c1' }).expect(401);
    await sendHandshake(app, { challenge: 'c2', token: WRONG }).expect(401);
    await sendHandshake(app, { challenge: 'c3', token: GOOD }).expect(200, { challenge: 'c3' });
    const [missing, wrong, ...more] = warnings();
    expect(more).toEqual([]);
    expect(missing?.message).toMatch(/refused a handshake without a bearer token.*stays unverified/);
    expect(wrong?.message).toMatch(/refused a handshake whose bearer token is not one this receiver accepts/);
    expect(JSON.stringify(logger.records)).not.toContain(WRONG);
  });
});
