import request from 'supertest';
import { createDemoReceiver } from '../demo-app/demo-receiver';
import { buildEvent, sendEvent } from '../lib/testing';

describe('the demo app /metrics', () => {
  it('counts what the demo receiver answered, in the Prometheus text format', async () => {
    const demo = createDemoReceiver();
    demo.useToken('tok_demo_metrics');
    const event = buildEvent('ag.access_pass.issued');
    await sendEvent(demo.app, event, { token: 'tok_demo_metrics', path: '/webhooks' }).expect(200);
    await sendEvent(demo.app, event, { token: 'tok_demo_metrics', path: '/webhooks' }).expect(200);
    await sendEvent(demo.app, event, { token: 'wrong', path: '/webhooks' }).expect(401);
    await demo.drain();

    const scraped = await request(demo.app).get('/metrics').expect(200);
    expect(scraped.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const deliveries = 'service_webhooks_requests_total';
    expect(scraped.text).toContain(`${deliveries}{type="ag.access_pass.issued",outcome="processed"} 1`);
    expect(scraped.text).toContain(`${deliveries}{type="ag.access_pass.issued",outcome="duplicate"} 1`);
    expect(scraped.text).toContain(`${deliveries}{type="none",outcome="rejected"} 1`);
    expect(scraped.text).toContain('service_webhooks_requests_in_flight 0');
    // The demo's own log still sees every delivery.
    expect(demo.log.map((entry) => entry.outcome)).toEqual(['processed', 'duplicate']);
  });
});
