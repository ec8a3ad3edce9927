import type * as BullmqEntry from '../lib/bullmq';
import type * as OpenInbox from '../lib/cli/open-inbox';

/** The bullmq entry and the CLI's inbox opener, loaded where `require('ioredis')` fails, as after `npm install bullmq` alone. */
function withoutIoredis<T>(use: (entry: typeof BullmqEntry, cli: typeof OpenInbox) => T): T {
  let result: T | undefined;
  jest.isolateModules(() => {
    jest.doMock('ioredis', () => {
      throw Object.assign(new Error("Cannot find module 'ioredis'"), { code: 'MODULE_NOT_FOUND' });
    });
    result = use(
      jest.requireActual<typeof BullmqEntry>('../lib/bullmq'),
      jest.requireActual<typeof OpenInbox>('../lib/cli/open-inbox'),
    );
  });
  jest.dontMock('ioredis');
  return result as T;
}

const HINT =
  /^\[service-webhooks\] bullmqInbox: a redis:\/\/ URL or connection options need 'ioredis', which BullMQ makes its connections with but does not install: npm install ioredis$/;

describe('bullmqInbox without ioredis installed', () => {
  it.each<[string, unknown]>([
    ['a redis:// URL', 'redis://127.0.0.1:1'],
    ['ioredis options', { host: '127.0.0.1', port: 1 }],
  ])('refuses %s at construction, naming what to install', (_what, connection) => {
    withoutIoredis(({ bullmqInbox }) => {
      expect(() => bullmqInbox({ connection: connection as string, logger: false })).toThrow(HINT);
    });
  });

  it('the CLI says the same for a --url redis://', () => {
    withoutIoredis((_entry, { openInbox }) => {
      expect(() => openInbox('redis://127.0.0.1:1', undefined)).toThrow(HINT);
    });
  });
});
