import { bullmqInbox } from '../lib/bullmq';
import { describeWithRedis, startRedisServer, type RedisServer } from './support/redis-server';
import { hasFastProperties } from './support/has-fast-properties';

// One test in this file, on purpose: once String.prototype has been made fast again, V8 keeps it so
// when another class extends String, so a second case in this realm would prove nothing.
describeWithRedis('fastStringPrototype, through bullmqInbox', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedisServer();
  }, 30_000);
  afterAll(() => redis?.close());

  it('puts String.prototype back in fast mode after ioredis made it a dictionary', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded here, as an app's own client would be
    require('ioredis');
    const slowed = hasFastProperties(String.prototype);
    const inbox = bullmqInbox({ connection: redis.url, name: 'fast-string-prototype', logger: false });
    try {
      expect({ slowed, after: hasFastProperties(String.prototype) }).toEqual({ slowed: false, after: true });
    } finally {
      await inbox.close();
    }
  });
});
