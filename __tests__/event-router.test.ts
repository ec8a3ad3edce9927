import express from 'express';
import {
  createEventRouter,
  EVENT_PATTERNS,
  EVENT_TYPES,
  isEventPattern,
  isEventType,
  OptionsError,
  webhookReceiver,
  type EventRouter,
} from '../lib';
import { buildEvent, deliverEvent, sendEvent } from '../lib/testing';

const TOKEN = 'tok_router';

function appFor(router: EventRouter) {
  const app = express();
  app.use(webhookReceiver({ bearerTokens: [TOKEN], router, logger: false, idempotency: false }));
  return app;
}

describe('the catalogue', () => {
  it('has the 27 types of spec section 6, each once', () => {
    expect(EVENT_TYPES).toHaveLength(27);
    expect(new Set(EVENT_TYPES).size).toBe(27);
  });

  it('derives family patterns, device patterns included', () => {
    expect(EVENT_PATTERNS.get('ag.access_pass.*')).toHaveLength(13);
    expect(EVENT_PATTERNS.get('ag.access_pass.devices.*')).toEqual([
      'ag.access_pass.devices.added',
      'ag.access_pass.devices.suspended',
      'ag.access_pass.devices.resumed',
    ]);
    expect(EVENT_PATTERNS.get('ag.*')).toHaveLength(27);
  });

  it.each([
    ['ag.access_pass.issued', true, false],
    ['ag.access_pass.*', false, true],
    ['ag.nope', false, false],
    [42, false, false],
  ])('isEventType/isEventPattern(%p)', (value, type, pattern) => {
    expect(isEventType(value)).toBe(type);
    expect(isEventPattern(value)).toBe(pattern);
  });
});

describe('createEventRouter', () => {
  it('runs one handler for several types, and a family pattern for its family only', async () => {
    const calls: string[] = [];
    const router = createEventRouter()
      .on(['ag.hid_org.created', 'ag.hid_org.activated'], (e) => void calls.push(`list:${e.type}`))
      .on('ag.access_pass.devices.*', (e) => void calls.push(`devices:${e.type}`))
      .on('ag.access_pass.*', (e) => void calls.push(`family:${e.type}`));
    const app = appFor(router);
    for (const type of [
      'ag.hid_org.activated',
      'ag.access_pass.devices.added',
      'ag.access_pass.issued',
      'ag.landing_page.created',
    ] as const) {
      await deliverEvent(app, type, {}, { token: TOKEN }).expect(200);
    }
    expect(calls.sort()).toEqual(
      [
        'list:ag.hid_org.activated',
        'devices:ag.access_pass.devices.added',
        'family:ag.access_pass.devices.added',
        'family:ag.access_pass.issued',
      ].sort(),
    );
  });

  it('runs every handler for a type, and onAny for every event', async () => {
    const calls: string[] = [];
    const router = createEventRouter()
      .on('ag.hid_org.created', () => void calls.push('first'), { name: 'first' })
      .on('ag.hid_org.created', async () => void calls.push('second'), { name: 'second' })
      .onAny((e) => void calls.push(`any:${e.type}`));
    const res = await deliverEvent(appFor(router), 'ag.hid_org.created', {}, { token: TOKEN }).expect(200);
    expect(res.body.status).toBe('processed');
    expect(calls.sort()).toEqual(['any:ag.hid_org.created', 'first', 'second']);
  });

  it('acknowledges an event without handler as unhandled, running onUnhandled and onAny', async () => {
    const calls: string[] = [];
    const router = createEventRouter()
      .on('ag.hid_org.created', () => void calls.push('specific'))
      .onUnhandled((e) => void calls.push(`unhandled:${e.type}`))
      .onAny((e) => void calls.push(`any:${e.type}`));
    const res = await deliverEvent(appFor(router), 'ag.landing_page.updated', {}, { token: TOKEN }).expect(
      200,
    );
    expect(res.body).toMatchObject({ type: 'ag.landing_page.updated', status: 'unhandled' });
    expect(calls.sort()).toEqual(['any:ag.landing_page.updated', 'unhandled:ag.landing_page.updated']);
  });

  it('gives a type the catalogue does not know to onAny and onUnhandled, normalized', async () => {
    const seen: unknown[] = [];
    const router = createEventRouter()
      .on('ag.access_pass.*', () => void seen.push('family'))
      .onUnhandled((e) => void seen.push('id' in e.data ? e.data.id : undefined))
      .onAny((e) => void seen.push(e.type));
    const envelope = { ...buildEvent('ag.access_pass.updated'), type: 'ag.access_pass.archived' };
    const res = await sendEvent(appFor(router), envelope, { token: TOKEN }).expect(200);
    expect(res.body.status).toBe('unhandled');
    expect(seen.sort()).toEqual(['ag.access_pass.archived', 'ap_7d41b0e2']);
  });

  it('answers 500 when an onUnhandled handler refuses the event', async () => {
    const router = createEventRouter().onUnhandled(() => {
      throw new Error('not deployed yet');
    });
    await deliverEvent(appFor(router), 'ag.hid_org.created', {}, { token: TOKEN }).expect(500);
  });

  it.each([
    ['ag.acess_pass.issued', 'ag.access_pass.issued'],
    ['ag.access_pass.issue', 'ag.access_pass.issued'],
    ['ag.access-pass.*', 'ag.access_pass.*'],
    ['ag.card_templates.created', 'ag.card_template.created'],
  ])('throws a TypeError with a hint for %s', (bad, hint) => {
    expect(() => createEventRouter().on(bad as never, () => undefined)).toThrow(TypeError);
    expect(() => createEventRouter().on(bad as never, () => undefined)).toThrow(`Did you mean "${hint}"?`);
  });

  it('throws without a hint when nothing is close', () => {
    expect(() => createEventRouter().on('completely.different' as never, () => undefined)).toThrow(
      /not an event type or pattern of the catalogue\.$/,
    );
  });

  it.each([
    ['on without a handler', (r: EventRouter) => r.on('ag.hid_org.created', undefined as never)],
    ['on with an empty list', (r: EventRouter) => r.on([], () => undefined)],
    ['onAny with a string', (r: EventRouter) => r.onAny('x' as never)],
    ['onError with nothing', (r: EventRouter) => r.onError(undefined as never)],
  ])('throws a TypeError for %s', (_name, register) => {
    expect(() => register(createEventRouter())).toThrow(TypeError);
  });
});

describe("on(..., { ordering: 'newest-wins' })", () => {
  const handler = () => undefined;

  it('splits the matched handlers into ordered and unordered, once per type', () => {
    const ordered = () => undefined;
    const any = () => undefined;
    const router = createEventRouter()
      .on('ag.access_pass.*', ordered, { ordering: 'newest-wins' })
      .on('ag.access_pass.updated', handler)
      .onAny(any);
    const matched = router.match('ag.access_pass.updated');
    expect(matched).toMatchObject({ ordered: [ordered], unordered: [handler, any] });
    expect(matched.handlers).toEqual([ordered, handler, any]);
    expect(router.match('ag.access_pass.updated')).toBe(matched);
    expect(router.match('ag.hid_org.created')).toMatchObject({ ordered: [], unordered: [any] });
    expect(router.hasOrderedHandlers).toBe(true);
    expect(createEventRouter().on('ag.hid_org.created', handler, {}).hasOrderedHandlers).toBe(false);
  });

  it('matches a type again after a registration, the same type as the last event included', () => {
    const later = () => undefined;
    const created = () => undefined;
    const router = createEventRouter().on('ag.access_pass.updated', handler);
    expect(router.match('ag.access_pass.updated').handlers).toEqual([handler]);
    router.onAny(later);
    expect(router.match('ag.access_pass.updated').handlers).toEqual([handler, later]);
    router.on('ag.access_pass.updated', created);
    expect(router.match('ag.access_pass.updated').handlers).toEqual([handler, created, later]);
  });

  it.each([
    ['a misspelt option', { orderng: 'newest-wins' }, /unknown option "orderng"; did you mean "ordering"\?/],
    [
      'a misspelt ordering',
      { ordering: 'newest-win' },
      /ordering must be 'newest-wins' \(got "newest-win"\); did you mean "newest-wins"\?/,
    ],
    ['another ordering', { ordering: 'oldest-wins' }, /ordering must be 'newest-wins' \(got "oldest-wins"\)/],
    ['options that are not an object', 'newest-wins', /options must be an object/],
  ])('refuses %s at registration', (_name, options, message) => {
    const register = () => createEventRouter().on('ag.access_pass.updated', handler, options as never);
    expect(register).toThrow(OptionsError);
    expect(register).toThrow(message);
  });
});

describe('handler names', () => {
  function syncCrm() {
    return undefined;
  }
  const audit = () => undefined;

  it('names each handler by its name option, else its function name, else its registration', () => {
    const anonymous = [() => undefined, () => undefined, () => undefined];
    const router = createEventRouter()
      .on('ag.access_pass.issued', syncCrm)
      .on('ag.access_pass.issued', () => undefined, { name: 'welcome-email' })
      .on('ag.access_pass.*', audit)
      .on(['ag.hid_org.created', 'ag.hid_org.activated'], anonymous[0] as () => undefined)
      .onUnhandled(anonymous[1] as () => undefined)
      .onAny(anonymous[2] as () => undefined, { name: 'everything' });
    const issued = router.match('ag.access_pass.issued');
    expect(issued.handlers.map((h) => issued.names.get(h))).toEqual([
      'syncCrm',
      'welcome-email',
      'audit',
      'everything',
    ]);
    const created = router.match('ag.hid_org.created');
    expect(created.names.get(anonymous[0] as never)).toBe("ag.hid_org.created', 'ag.hid_org.activated");
    const unknown = router.match('ag.landing_page.created');
    expect(unknown.handlers.map((h) => unknown.names.get(h))).toEqual(['onUnhandled', 'everything']);
  });

  it('lets one function serve types that never meet under one name', () => {
    const router = createEventRouter().on('ag.hid_org.created', audit).on('ag.access_pass.*', audit);
    expect(router.match('ag.hid_org.created').names.get(audit)).toBe('audit');
    expect(router.match('ag.access_pass.issued').names.get(audit)).toBe('audit');
  });

  it.each([
    [
      'two anonymous handlers of one registration',
      (r: EventRouter) =>
        r.on('ag.access_pass.issued', () => undefined).on('ag.access_pass.issued', () => undefined),
      /on\('ag\.access_pass\.issued', \.\.\.\): this anonymous handler is named "ag\.access_pass\.issued" after its registration, and another handler already has that name\. Give each its own name, e\.g\. \{ name: 'crm' \}/,
    ],
    [
      'two anonymous onAny handlers',
      (r: EventRouter) => r.onAny(() => undefined).onAny(() => undefined),
      /onAny\(\.\.\.\): this anonymous handler is named "onAny"/,
    ],
    [
      'two anonymous onUnhandled handlers',
      (r: EventRouter) => r.onUnhandled(() => undefined).onUnhandled(() => undefined),
      /onUnhandled\(\.\.\.\): this anonymous handler is named "onUnhandled"/,
    ],
    [
      'two functions under one name option',
      (r: EventRouter) =>
        r
          .on('ag.access_pass.issued', syncCrm, { name: 'crm' })
          .on('ag.hid_org.created', audit, { name: 'crm' }),
      /on\('ag\.hid_org\.created', \.\.\.\): two different handlers are named "crm"\. Give each its own \{ name: '\.\.\.' \}/,
    ],
    [
      'a name option that is another function’s own name',
      (r: EventRouter) => r.on('ag.access_pass.issued', syncCrm).onAny(audit, { name: 'syncCrm' }),
      /onAny\(\.\.\.\): two different handlers are named "syncCrm"/,
    ],
    [
      'one function twice for one type',
      (r: EventRouter) => r.on('ag.access_pass.*', audit).on('ag.access_pass.issued', audit),
      /the handler "audit" is already registered for some of these events, and would run twice for one event under one name\. Register it once with a list of types/,
    ],
    [
      'one function in on and in onAny',
      (r: EventRouter) => r.on('ag.access_pass.issued', audit).onAny(audit),
      /onAny\(\.\.\.\): the handler "audit" is already registered/,
    ],
    [
      'one function in onAny and then in on',
      (r: EventRouter) => r.onAny(audit).on('ag.access_pass.issued', audit),
      /on\('ag\.access_pass\.issued', \.\.\.\): the handler "audit" is already registered/,
    ],
    [
      'one function under two names for one type',
      (r: EventRouter) =>
        r.on('ag.access_pass.issued', audit, { name: 'a' }).on('ag.access_pass.issued', audit, { name: 'b' }),
      /the handler "b" is already registered for some of these events/,
    ],
    [
      'an empty name',
      (r: EventRouter) => r.on('ag.access_pass.issued', audit, { name: '' }),
      /name must be a string of 1 to 128 characters without control characters \(got a string of 0 characters\)/,
    ],
    [
      'a name too long',
      (r: EventRouter) => r.on('ag.access_pass.issued', audit, { name: 'x'.repeat(129) }),
      /got a string of 129 characters/,
    ],
    [
      'a name with a newline',
      (r: EventRouter) => r.on('ag.access_pass.issued', audit, { name: 'crm\nx' }),
      /without control characters/,
    ],
    [
      'a name that is not a string',
      (r: EventRouter) => r.onAny(audit, { name: 7 as never }),
      /onAny: name must be a string .* \(got number\)/,
    ],
    [
      'a misspelt onUnhandled option',
      (r: EventRouter) => r.onUnhandled(audit, { nmae: 'x' } as never),
      /onUnhandled: unknown option "nmae"; did you mean "name"\?/,
    ],
    [
      'onAny options that are not an object',
      (r: EventRouter) => r.onAny(audit, 'audit' as never),
      /onAny: options must be an object, e\.g\. \{ name: 'audit' \}/,
    ],
  ])('refuses %s at registration, saying what to do', (_name, register, message) => {
    const router = createEventRouter();
    expect(() => register(router)).toThrow(OptionsError);
    expect(() => register(createEventRouter())).toThrow(message);
  });

  it('keeps a refused registration out of the router', () => {
    const router = createEventRouter().on('ag.access_pass.issued', syncCrm, { name: 'crm' });
    expect(() => router.on('ag.access_pass.issued', audit, { name: 'crm' })).toThrow(OptionsError);
    expect(router.match('ag.access_pass.issued').handlers).toEqual([syncCrm]);
  });
});
