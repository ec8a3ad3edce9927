import { gzipSync } from 'node:zlib';
import { buildEvent } from '../lib/testing';
import { bodyDelivery, doorReceiver } from './support/door-receiver';
import { DOORS } from './support/doors';

const TOKEN = 'tok_check_content';

describe.each(DOORS)('the content check through $name', (door) => {
  const start = doorReceiver(door, TOKEN);

  it('answers 415 to a gzip-encoded body instead of misreading it', async () => {
    const { d } = await start({});
    const body = gzipSync(JSON.stringify(buildEvent('ag.hid_org.created')));
    const answer = await d.send(bodyDelivery(TOKEN, body, { 'content-encoding': 'gzip' }));
    expect([answer.status, JSON.parse(answer.text).field]).toEqual([415, 'Content-Encoding']);
  });
});
