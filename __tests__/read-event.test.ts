import { createEventRouter, createFetchHandler } from '../lib';
import { buildEvent } from '../lib/testing';
import { doorReceiver, tokenDelivery } from './support/door-receiver';
import { DOORS } from './support/doors';

const TOKEN = 'tok_read_event';

describe.each(DOORS)('reading the event through $name', (door) => {
  const start = doorReceiver(door, TOKEN);

  it('reads a structured event as structured even with ce- headers beside it', async () => {
    const { d, seen } = await start({});
    const event = buildEvent('ag.landing_page.created', { landing_page_id: 'lp_1' });
    const answer = await d.send(
      tokenDelivery(TOKEN, event, {
        'ce-specversion': '1.0',
        'ce-id': 'other',
        'ce-source': 's',
        'ce-type': 't',
      }),
    );
    expect(answer.status).toBe(200);
    expect(seen.map((e) => [e.id, 'landing_page_id' in e.data ? e.data.landing_page_id : undefined])).toEqual(
      [[event.id, 'lp_1']],
    );
  });

  it('drops a __proto__ key inside data_base64, as it does in data', async () => {
    const { d, seen } = await start({});
    const data = '{"landing_page_id":"lp","__proto__":{"injected":"yes"}}';
    const event = {
      ...buildEvent('ag.landing_page.created'),
      data: undefined,
      data_base64: Buffer.from(data).toString('base64'),
    };
    expect((await d.send(tokenDelivery(TOKEN, event))).status).toBe(200);
    const received = seen[0]?.data as Record<string, unknown>;
    expect([received.landing_page_id, received.injected, Object.getPrototypeOf(received)]).toEqual([
      'lp',
      undefined,
      Object.prototype,
    ]);
  });
});

describe('reading the event: a body already read', () => {
  it('answers 400 body-consumed to a Fetch request whose body was already read', async () => {
    const handler = createFetchHandler({ bearerTokens: [TOKEN], router: createEventRouter(), logger: false });
    const request = new Request('http://app.local/webhooks', {
      method: 'POST',
      ...tokenDelivery(TOKEN, buildEvent('ag.hid_org.created')),
    });
    await request.text();
    const response = await handler(request);
    expect([response.status, ((await response.json()) as { type: string }).type]).toEqual([
      400,
      'urn:service-webhooks:problem:body-consumed',
    ]);
  });
});
