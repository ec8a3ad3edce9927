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

describe('checkContent when the content-type module cannot load', () => {
  it('throws the load error (the receiver answers 500, retried), not a 415 for the sender', () => {
    jest.isolateModules(() => {
      jest.doMock('content-type', () => {
        throw new Error("Cannot find module 'content-type'");
      });
      type Module = typeof import('../lib/core/event/check-content');
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded under the mock above
      const { checkContent } = require('../lib/core/event/check-content') as Module;
      expect(() => checkContent('application/cloudevents+json; charset="UTF-8"', undefined, false)).toThrow(
        /Cannot find module 'content-type'/,
      );
    });
  });
});
