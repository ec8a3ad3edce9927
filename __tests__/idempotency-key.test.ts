import { buildEvent } from '../lib/testing';
import { doorReceiver, tokenDelivery } from './support/door-receiver';
import { DOORS } from './support/doors';

const TOKEN = 'tok_keys';

describe.each(DOORS)('idempotency keys through $name', (door) => {
  const start = doorReceiver(door, TOKEN);

  it('keeps ids with different lone surrogates apart', async () => {
    const { d, seen } = await start({});
    const base = { ...buildEvent('ag.hid_org.created'), source: `/service/${'s'.repeat(200)}` };
    const answers = [
      await d.send(tokenDelivery(TOKEN, { ...base, id: '\ud800' })),
      await d.send(tokenDelivery(TOKEN, { ...base, id: '\udfff' })),
    ];
    expect(answers.map((a) => JSON.parse(a.text).status)).toEqual(['unhandled', 'unhandled']);
    expect(seen).toHaveLength(2);
  });
});
