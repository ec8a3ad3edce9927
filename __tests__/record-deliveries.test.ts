import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { createEventRouter, webhookReceiver, type DeliveryListener } from 'service-webhooks';
import {
  buildEvent,
  parseScenario,
  playScenario,
  recordDeliveries,
  sendEvent,
  type DeliveryEnvelope,
} from 'service-webhooks/testing';

const token = 'record-token';

function app(onDelivery?: DeliveryListener) {
  const router = createEventRouter()
    .on('ag.access_pass.*', () => undefined, { ordering: 'newest-wins' })
    .on('ag.hid_org.created', () => {
      throw new Error('refused on purpose');
    });
  const receiver = express();
  receiver.use(
    '/webhooks',
    webhookReceiver({ bearerTokens: [token], router, logger: false, ...(onDelivery ? { onDelivery } : {}) }),
  );
  return receiver;
}

const secrets = {
  full_name: 'Grace Hopper',
  employee_id: 'EMP-31337',
  tag_id: '04aabbccddeeff',
  metadata: { contact: 'grace@example.org', badge: 'BADGE-9001' },
};

describe('recordDeliveries', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'record-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('records what the receiver read, redacted, with its answers; the file plays back against a fresh receiver', async () => {
    const file = join(dir, 'recorded.json');
    const target = app(recordDeliveries({ file, redact: ['badge'] }));
    const send = (event: DeliveryEnvelope, as = token) =>
      sendEvent(target, event, { token: as, path: '/webhooks' });
    const issued = buildEvent(
      'ag.access_pass.issued',
      { id: 'ap_r', ...secrets },
      { time: '2026-11-25T10:02:00Z' },
    );
    const older = buildEvent('ag.access_pass.updated', { id: 'ap_r' }, { time: '2026-11-25T10:01:00Z' });
    await send(issued).expect(200);
    await send(issued).expect(200);
    await send(issued, 'wrong-token').expect(401);
    await send(older).expect(200);
    await send(buildEvent('ag.hid_org.created', {})).expect(500);

    const text = readFileSync(file, 'utf8');
    for (const value of [
      secrets.full_name,
      secrets.employee_id,
      secrets.tag_id,
      ...Object.values(secrets.metadata),
    ])
      expect(text).not.toContain(value);
    expect(text).not.toContain(token);
    const scenario = parseScenario(JSON.parse(text), 'test');
    expect(scenario.deliveries.map((d) => [d.event.type, d.expect])).toEqual([
      ['ag.access_pass.issued', { status: 200, body: { status: 'processed' } }],
      ['ag.access_pass.issued', { status: 200, body: { status: 'duplicate' } }],
      ['ag.access_pass.updated', { status: 200, body: { status: 'stale' } }],
      ['ag.hid_org.created', { status: 500 }],
    ]);
    expect(scenario.deliveries[0]?.event.id).toBe(issued.id);

    const played = await playScenario(app(), file, { token, path: '/webhooks' });
    expect(played.map((p) => p.status)).toEqual([200, 200, 200, 500]);
  });

  it.each([
    ['a misspelt option', { file: 'x', redcat: [] }, /unknown option "redcat"; did you mean "redact"\?/],
    ['no file', {}, /recordDeliveries: file must be the path of the scenario file to write/],
    [
      'redact that is not a list',
      { file: 'x', redact: 'badge' },
      /redact must be a list of data field names/,
    ],
  ])('refuses %s at construction', (_, options, message) => {
    expect(() => recordDeliveries(options as never)).toThrow(message);
  });

  it('refuses an onEvent that is not a function, at construction', () => {
    const listener = Object.assign(() => undefined, { onEvent: 'yes' });
    expect(() => app(listener as unknown as DeliveryListener)).toThrow(
      /onDelivery\.onEvent must be a function, or absent/,
    );
  });
});
