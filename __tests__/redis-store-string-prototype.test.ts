import { RedisStore } from '../lib/redis';
import { hasFastProperties } from './support/has-fast-properties';

// A file of its own with one test (as fast-string-prototype.test.ts): once String.prototype is fast
// again, V8 keeps it so, so a second case in this realm would prove nothing.
describe('RedisStore and an ioredis client', () => {
  it('puts String.prototype back in fast mode, which loading ioredis made a dictionary', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded here, as an app's own client would be
    require('ioredis');
    const slowed = hasFastProperties(String.prototype);
    // No server needed: the store sends nothing until it is used.
    new RedisStore({ sendCommand: async () => null, logger: false });
    expect({ slowed, after: hasFastProperties(String.prototype) }).toEqual({ slowed: false, after: true });
  });
});
