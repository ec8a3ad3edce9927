import { CloudEvent, HTTP } from 'cloudevents';
import { createEventRouter, createFetchHandler, type AnyWebhookEvent } from '../lib';
import { buildEvent, buildUnknownEvent, DELIVERY_HEADERS } from '../lib/testing';
import { EVENT_TYPES } from '../lib/events/catalogue';

/**
 * The test kit builds deliveries without the CloudEvents SDK; the SDK stays a devDependency, and this
 * proves the two agree both ways.
 */
describe('our deliveries and the CloudEvents SDK agree', () => {
  it.each(EVENT_TYPES.flatMap((type) => (['A', 'B'] as const).map((layout) => [type, layout] as const)))(
    'the SDK reads our %s (layout %s) as the same event, and writes it back byte for byte',
    (type, layout) => {
      const ours = buildEvent(type, {}, { layout });
      const body = JSON.stringify(ours);
      const read = HTTP.toEvent({
        headers: { 'content-type': 'application/cloudevents+json' },
        body,
      }) as CloudEvent;
      expect(read.validate()).toBe(true);
      expect({ ...read.toJSON() }).toEqual(ours);
      expect(HTTP.structured(new CloudEvent({ ...ours })).body).toBe(body);
    },
  );

  it('the SDK reads an event the catalogue does not know', () => {
    const ours = buildUnknownEvent('ag.brand_new.thing', { anything: 1 });
    const read = HTTP.toEvent({
      headers: { 'content-type': 'application/cloudevents+json' },
      body: JSON.stringify(ours),
    }) as CloudEvent;
    expect(read.type).toBe('ag.brand_new.thing');
    expect(read.data).toEqual(ours.data);
    expect(read.data).toMatchObject({ anything: 1 });
  });

  it.each(['structured', 'binary'] as const)('our receiver reads the SDK emitter’s %s mode', async (mode) => {
    const seen: AnyWebhookEvent[] = [];
    const handler = createFetchHandler({
      bearerTokens: ['tok'],
      logger: false,
      router: createEventRouter().on('ag.access_pass.issued', (event) => void seen.push(event)),
    });
    const source = buildEvent('ag.access_pass.issued', {}, { id: `evt_sdk_${mode}` });
    const message = HTTP[mode](new CloudEvent({ ...source }));
    const headers = Object.fromEntries(Object.entries(message.headers).map(([k, v]) => [k, String(v)]));
    const response = await handler(
      new Request('http://app.local/', {
        method: 'POST',
        headers: { 'user-agent': DELIVERY_HEADERS['User-Agent'], ...headers, authorization: 'Bearer tok' },
        body: message.body as string,
      }),
    );
    expect(response.status).toBe(200);
    expect(seen.map((event) => [event.id, event.type, event.source, event.time])).toEqual([
      [source.id, source.type, source.source, source.time],
    ]);
    expect(seen[0]?.data).toMatchObject({ id: source.data.id });
  });
});
