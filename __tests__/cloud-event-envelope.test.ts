import { buildEvent } from '../lib/testing';
import { doorReceiver, tokenDelivery } from './support/door-receiver';
import { DOORS } from './support/doors';

const TOKEN = 'tok_envelope';

describe.each(DOORS)('the envelope check through $name', (door) => {
  const start = doorReceiver(door, TOKEN);

  it('caps the errors list at 20 for a body full of bad extension names, and counts them all', async () => {
    const { d } = await start({});
    const event: Record<string, unknown> = { ...buildEvent('ag.hid_org.created') };
    for (let i = 0; i < 40_000; i++) event[`Bad_${i}`] = 1;
    const answer = await d.send(tokenDelivery(TOKEN, event));
    expect(answer.status).toBe(400);
    const problem = JSON.parse(answer.text) as { errors: unknown[]; errorCount: number };
    expect(problem.errors).toHaveLength(20);
    expect(problem.errorCount).toBe(40_000);
    expect(answer.text.length).toBeLessThan(10_000);
  });
});
