import express from 'express';
import { createEventRouter, webhookReceiver } from 'service-webhooks';
import { createEmulator, type Emulator } from '../lib/emulator';
import { playScenario } from '../lib/testing';
import { listen } from './support/listen';
import { parseScenario } from '../lib/events/parse-scenario';

describe('the emulator exports the events it keeps as a scenario (GET /_emulator/scenario)', () => {
  let emulator: Emulator;
  beforeEach(async () => {
    emulator = await createEmulator({ logger: false });
  });
  afterEach(() => emulator.close());

  it('oldest first, redacted, with a redelivery as a repeat, as a file to download', async () => {
    const issued = emulator.emit('ag.access_pass.issued', {
      full_name: 'Katherine Johnson',
      tag_id: '04ffeeddccbbaa',
    });
    emulator.emit('ag.access_pass.devices.added', { card_number: '5566778' }, { layout: 'B' });
    const res = await fetch(`${emulator.url}/_emulator/scenario`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="scenario.json"');
    const text = await res.text();
    for (const secret of ['Katherine Johnson', '04ffeeddccbbaa', '5566778'])
      expect(text).not.toContain(secret);
    const scenario = parseScenario(JSON.parse(text), 'test');
    expect(scenario.deliveries.map((d) => [d.event.type, d.layout, d.event.id])).toEqual([
      ['ag.access_pass.issued', 'A', issued.event.id],
      ['ag.access_pass.devices.added', 'B', expect.any(String)],
    ]);
    expect(scenario.deliveries.every((d) => d.repeat === undefined)).toBe(true);
  });

  it('an event delivered twice to a webhook is one delivery with a repeat, which plays as a duplicate', async () => {
    const token = 'scenario-export-token-0123';
    // A fresh receiver each time: the one the emulator delivered to has seen the event already.
    const receiver = () =>
      express().use(
        '/webhooks',
        webhookReceiver({ bearerTokens: [token], router: createEventRouter(), logger: false }),
      );
    const server = await listen(receiver());
    try {
      const webhook = await emulator.registerWebhook({
        name: 'export',
        url: `${server.url}/webhooks`,
        subscribedEvents: ['ag.hid_org.created'],
        privateKey: token,
      });
      expect(webhook.verified).toBe(true);
      const { event } = emulator.emit('ag.hid_org.created');
      await emulator.waitForDeliveries({ eventId: event.id });
      emulator.resend(event.id);
      await emulator.waitForIdle({ timeoutMs: 10_000 });
      const text = await (await fetch(`${emulator.url}/_emulator/scenario`)).text();
      const scenario = parseScenario(JSON.parse(text), 'test');
      expect(scenario.deliveries.map((d) => [d.event.id, d.repeat])).toEqual([[event.id, 1]]);
      const played = await playScenario(receiver(), scenario, { token, path: '/webhooks' });
      expect(played.map((p) => p.bodyStatus)).toEqual(['unhandled', 'duplicate']);
    } finally {
      await server.close();
    }
  });

  it('the web console links to it', async () => {
    const page = await (await fetch(`${emulator.url}/`)).text();
    expect(page).toContain(
      '<a href="/_emulator/scenario" download="scenario.json" data-testid="export-scenario">',
    );
  });
});
