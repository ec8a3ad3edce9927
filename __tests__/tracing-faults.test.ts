import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createEventRouter } from '../lib';
import { buildEvent, DELIVERY_HEADERS } from '../lib/testing';
import { DOORS } from './support/doors';

// The application's tracing SDK is a dependency like any other: if it throws, the delivery goes on
// untraced, answered as ever, and nothing escapes (a throwing span processor once crashed Express).
const throwing: SpanProcessor = {
  onStart: () => {
    throw new Error('span processor down');
  },
  onEnd: () => {
    throw new Error('span processor down');
  },
  forceFlush: async () => undefined,
  shutdown: async () => undefined,
};
const provider = new BasicTracerProvider({ spanProcessors: [throwing] });
beforeAll(() => trace.setGlobalTracerProvider(provider));
afterAll(() => trace.disable());

describe.each(DOORS)('a tracing SDK that throws, through $name', (door) => {
  it('answers every request as if there were no tracing, and escapes nowhere', async () => {
    const escaped: unknown[] = [];
    const onEscape = (error: unknown) => void escaped.push(error);
    process.on('unhandledRejection', onEscape);
    process.on('uncaughtException', onEscape);
    const ran: string[] = [];
    const router = createEventRouter().on('ag.hid_org.created', (event) => void ran.push(event.id));
    const open = await door.open({ bearerTokens: ['tok_t'], router, logger: false });
    try {
      const body = JSON.stringify(buildEvent('ag.hid_org.created', {}, { id: 'evt_traced' }));
      const good = await open.send({ headers: { ...DELIVERY_HEADERS, authorization: 'Bearer tok_t' }, body });
      const refused = await open.send({
        headers: { ...DELIVERY_HEADERS, authorization: 'Bearer bad' },
        body,
      });
      expect([good.status, refused.status]).toEqual([200, 401]);
      expect(ran).toEqual(['evt_traced']);
      expect(escaped).toEqual([]);
    } finally {
      await open.close();
      process.off('unhandledRejection', onEscape);
      process.off('uncaughtException', onEscape);
    }
  });
});
