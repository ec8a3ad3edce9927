import { createEventRouter, type Logger } from '../lib';
import { buildEvent } from '../lib/testing';
import { doorReceiver, tokenDelivery } from './support/door-receiver';
import { DOORS } from './support/doors';
import { pollUntil } from './support/poll-until';
import { watchProcess } from './support/watch-process';

const TOKEN = 'tok_run_handlers';
const isProblem = (answer: { status: number; headers: Record<string, string> }) =>
  /^application\/problem\+json/.test(answer.headers['content-type'] ?? '');

function errorWithThrowingStack(): Error {
  const error = new Error('boom');
  Object.defineProperty(error, 'stack', {
    get() {
      throw new Error('stack getter throws');
    },
  });
  return error;
}

function circularError(): Error {
  const error = new Error('circular') as Error & { request?: unknown };
  error.request = { error };
  return error;
}

describe.each(DOORS)('a failing handler with failing logger and onError hooks through $name', (door) => {
  const start = doorReceiver(door, TOKEN);

  it.each<[string, Logger | undefined, () => Error]>([
    [
      'a logger whose sink is down',
      {
        error: () => {
          throw new Error('sink down');
        },
        warn: () => {
          throw new Error('sink down');
        },
      },
      () => new Error('x'),
    ],
    [
      'a JSON.stringify logger given a circular error',
      { error: (meta: object) => JSON.stringify(meta) },
      circularError,
    ],
    [
      'an async logger that rejects',
      { error: async () => Promise.reject(new Error('sink down')) },
      () => new Error('x'),
    ],
    ['the default console logger and a throwing stack getter', undefined, errorWithThrowingStack],
  ])(
    'survives %s and onError hooks that throw, reject or hang: the failed handler still gets 500, unacknowledged',
    async (_name, logger, makeError) => {
      const watch = watchProcess();
      const error = jest.spyOn(console, 'error').mockImplementation(() => undefined);
      // How many times the logger was told an onError hook failed: 2 per request (one throws, one
      // rejects), the last of them once the rejection has been caught.
      let hookFailures = 0;
      const HOOK_FAILED = 'an onError handler threw';
      const counting =
        (log: (meta: object, message: string) => unknown) => (meta: object, message: string) => {
          if (message.includes(HOOK_FAILED)) hookFailures++;
          return log(meta, message);
        };
      const watched =
        logger &&
        (Object.fromEntries(
          Object.entries(logger).map(([level, log]) => [
            level,
            counting(log as (m: object, s: string) => unknown),
          ]),
        ) as Logger);
      const told = () =>
        logger
          ? hookFailures
          : error.mock.calls.filter((call) => call.some((part) => String(part).includes(HOOK_FAILED))).length;
      try {
        let runs = 0;
        const router = createEventRouter()
          .on('ag.hid_org.created', () => {
            runs++;
            throw makeError();
          })
          .onError(() => {
            throw new Error('onError throws too');
          })
          .onError(async () => Promise.reject(new Error('and rejects')))
          .onError(() => new Promise(() => undefined));
        const { d } = await start({ router, logger: watched });
        const event = buildEvent('ag.hid_org.created');
        const first = await d.send(tokenDelivery(TOKEN, event));
        const second = await d.send(tokenDelivery(TOKEN, event));
        await pollUntil('the logger told of 4 onError failures', () => told() >= 4, {
          describe: () => `told ${told()}`,
        });
        expect([first.status, second.status, isProblem(first)]).toEqual([500, 500, true]);
        expect(runs).toBe(2);
        expect(watch.escaped).toEqual([]);
      } finally {
        watch.stop();
        error.mockRestore();
      }
    },
  );
});
