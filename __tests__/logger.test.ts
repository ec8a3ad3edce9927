import express from 'express';
import { createEventRouter, createFetchHandler, webhookReceiver, type Logger } from 'service-webhooks';
import { buildEvent, deliverEvent, DELIVERY_HEADERS } from 'service-webhooks/testing';
import { resolveLogger } from '../lib/logger';

/** An error whose every accessor a serializer might touch throws. */
function hostileError(): Error {
  const error = new Error('boom');
  for (const key of ['stack', 'message', 'name', 'cause']) {
    Object.defineProperty(error, key, {
      get() {
        throw new Error(`getter ${key} throws`);
      },
    });
  }
  return error;
}

function circular(): Record<string, unknown> {
  const value: Record<string, unknown> = { id: 'evt_1' };
  value.self = value;
  return value;
}

/** Unhandled rejections seen while `body` runs, and for a few turns of the event loop after it. */
async function unhandledDuring(body: () => unknown): Promise<unknown[]> {
  const seen: unknown[] = [];
  const listener = (reason: unknown) => void seen.push(reason);
  process.on('unhandledRejection', listener);
  try {
    await body();
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('unhandledRejection', listener);
  }
  return seen;
}

let lines: { level: string; text: string }[];
beforeEach(() => {
  lines = [];
  for (const level of ['debug', 'info', 'warn', 'error', 'log'] as const) {
    jest.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      lines.push({ level, text: args.map(String).join(' ') });
    });
  }
});
afterEach(() => jest.restoreAllMocks());

describe('the default console logger', () => {
  const log = resolveLogger(undefined, 'test');

  it('prints the message first, then the metadata on the same line', () => {
    log.warn({ reason: 'token-invalid', suppressedSinceLast: 3, eventId: null }, 'refused a delivery');
    expect(lines).toEqual([
      {
        level: 'warn',
        text: '[service-webhooks] refused a delivery reason="token-invalid" suppressedSinceLast=3 eventId=null',
      },
    ]);
  });

  it('prints an error as its name and message, without a multi-line stack', () => {
    log.error({ err: new TypeError('bad thing') }, 'handler failed');
    expect(lines).toEqual([
      { level: 'error', text: '[service-webhooks] handler failed err=TypeError: bad thing' },
    ]);
  });

  it('keeps a big value short, on one line', () => {
    log.warn({ body: { text: 'x'.repeat(1000), nested: { a: [1, 2, 3] } } }, 'big');
    const [line] = lines;
    expect(line?.text.startsWith('[service-webhooks] big body={"text":"xxx')).toBe(true);
    expect(line?.text.length).toBeLessThan(300);
    expect(line?.text).not.toContain('\n');
  });

  it('prints nothing at debug and info', () => {
    log.debug({ eventId: 'e' }, 'acknowledged');
    log.info({}, 'hello');
    expect(lines).toEqual([]);
  });

  it('survives an error whose getters throw, and a circular value', () => {
    expect(() => log.error({ err: hostileError(), value: circular() }, 'still printed')).not.toThrow();
    expect(lines).toEqual([
      { level: 'error', text: '[service-webhooks] still printed err=[unprintable] value=[unprintable]' },
    ]);
  });

  it('survives a console that throws', () => {
    jest.spyOn(console, 'warn').mockImplementation(() => {
      throw new Error('EPIPE');
    });
    expect(() => log.warn({}, 'nowhere to go')).not.toThrow();
  });
});

describe("a user's logger never throws into the caller nor rejects unhandled", () => {
  const hostile: [string, Logger][] = [
    [
      'throws',
      {
        warn: () => {
          throw new Error('sink down');
        },
        error: () => {
          throw new Error('sink down');
        },
      },
    ],
    [
      'rejects (async)',
      {
        warn: async () => Promise.reject(new Error('sink down')),
        error: async () => Promise.reject(new Error('sink down')),
      },
    ],
    [
      'serializes as pino does, and meets a circular value and a throwing getter',
      {
        warn: (meta: Record<string, unknown>) => JSON.stringify(meta),
        error: (meta: Record<string, unknown>) =>
          JSON.stringify(meta, (_k, v: unknown) => (v as Error)?.stack ?? v),
      },
    ],
  ];

  it.each(hostile)('one that %s, called directly', async (_name, logger) => {
    const log = resolveLogger(logger, 'test');
    const unhandled = await unhandledDuring(() => {
      expect(() => log.warn({ value: circular() }, 'w')).not.toThrow();
      expect(() => log.error({ err: hostileError() }, 'e')).not.toThrow();
    });
    expect(unhandled).toEqual([]);
  });

  it.each(hostile)('one that %s, inside a receiver: every answer is still sent', async (_name, logger) => {
    const router = createEventRouter()
      .on('ag.hid_org.created', () => {
        throw hostileError();
      })
      .on('ag.hid_org.activated', () => undefined);
    const app = express().use(webhookReceiver({ bearerTokens: ['tok_1'], router, logger }));
    const unhandled = await unhandledDuring(async () => {
      await deliverEvent(app, 'ag.hid_org.created', {}, { token: 'tok_1' }).expect(500);
      await deliverEvent(app, 'ag.hid_org.created', {}, { token: 'wrong' }).expect(401);
      await deliverEvent(app, 'ag.hid_org.activated', {}, { token: 'tok_1' }).expect(200);
    });
    expect(unhandled).toEqual([]);
  });
});

it('a handler error with a throwing stack getter is logged by the default logger on one line', async () => {
  const router = createEventRouter().on('ag.hid_org.created', () => {
    throw hostileError();
  });
  const app = express().use(webhookReceiver({ bearerTokens: ['tok_1'], router }));
  await deliverEvent(app, 'ag.hid_org.created', {}, { token: 'tok_1' }).expect(500);
  expect(lines.length).toBeGreaterThan(0);
  for (const { text } of lines) {
    expect(text).toMatch(/^\[service-webhooks\] /);
    expect(text).not.toContain('\n');
  }
});

describe('sender bytes in a log line are escaped', () => {
  const FORGED = '\n[service-webhooks] acknowledged a delivery status=200 \u001b[2K\u009b31m\u2028\u202e';
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

  function strings(value: unknown, out: string[] = []): string[] {
    if (typeof value === 'string') out.push(value);
    else if (typeof value === 'object' && value !== null && !(value instanceof Error))
      for (const [key, item] of Object.entries(value)) strings(item, out).push(key);
    return out;
  }

  async function deliver(logger: Logger | undefined, event: Record<string, unknown>) {
    const router = createEventRouter().on('ag.hid_org.created', () => undefined);
    const handler = createFetchHandler({ bearerTokens: ['tok_1'], router, logger });
    const response = await handler(
      new Request('http://app.local/', {
        method: 'POST',
        headers: { ...DELIVERY_HEADERS, authorization: 'Bearer tok_1' },
        body: JSON.stringify(event),
      }),
    );
    await handler.drain({ timeoutMs: 1000 });
    return response.status;
  }

  const cases: [string, Record<string, unknown>, number][] = [
    [
      'an extension attribute name (refused)',
      { ...buildEvent('ag.hid_org.created'), [`x${FORGED}`]: 1 },
      400,
    ],
    [
      'an event id (acknowledged)',
      { ...buildEvent('ag.hid_org.created', {}, { id: `evt_1${FORGED}` }) },
      200,
    ],
  ];

  it.each(cases)("in %s, through a user's logger: message and metadata", async (_name, event, status) => {
    const calls: { meta: unknown; message: string }[] = [];
    const record = (meta: unknown, message: string) => void calls.push({ meta, message });
    expect(await deliver({ debug: record, info: record, warn: record, error: record }, event)).toBe(status);
    expect(calls.length).toBeGreaterThan(0);
    const seen = calls.flatMap(({ meta, message }) => [message, ...strings(meta)]);
    expect(seen.join(' ')).toContain('acknowledged a delivery status=200');
    for (const text of seen) expect(text).not.toMatch(CONTROL);
  });

  it.each(cases.filter(([, , status]) => status !== 200))(
    'in %s, through the default console logger: one line',
    async (_name, event, status) => {
      expect(await deliver(undefined, event)).toBe(status);
      expect(lines.length).toBeGreaterThan(0);
      for (const { text } of lines) expect(text).not.toMatch(CONTROL);
    },
  );
});
