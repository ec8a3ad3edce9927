import { createEventRouter, type EventRouter } from '../lib';
import { buildEvent } from '../lib/testing';
import { captureLogger } from './support/capture-logger';
import { tokenDelivery } from './support/door-receiver';
import { DOORS, type OpenDoor } from './support/doors';

const TOKEN = 'tok_returned_value';
const WARNING =
  /^\[service-webhooks\] a handler returned (.+), which the receiver ignores: .*refuses the event only by throwing/;

describe.each(DOORS)('a handler that returns a value, through $name (issue 29 item 7)', (door) => {
  let open: OpenDoor | undefined;
  const env = process.env.NODE_ENV;
  afterEach(async () => {
    await open?.close();
    open = undefined;
    process.env.NODE_ENV = env;
  });
  async function deliverTwice(router: EventRouter) {
    const logger = captureLogger();
    open = await door.open({ bearerTokens: [TOKEN], router, logger });
    const answers = [];
    for (const type of ['ag.access_pass.issued', 'ag.access_pass.issued'] as const) {
      const answer = await open.send(tokenDelivery(TOKEN, buildEvent(type)));
      answers.push([answer.status, (JSON.parse(answer.text) as { status: string }).status]);
    }
    return { answers, warnings: logger.records.filter((r) => r.level === 'warn') };
  }

  it.each<[string, unknown, string]>([
    ['false, meaning "not handled"', false, 'false'],
    ['a number', 0, '0'],
    ['an object (an Express habit)', { status: 200 }, 'an object'],
    ['a string', 'done: secret-ish text', 'a string'],
    ['null', null, 'null'],
  ])(
    '%s: the event is still processed, and one warning names the handler and the contract',
    async (_n, value, kind) => {
      const router = createEventRouter().on('ag.access_pass.issued', function saveIssuedPass() {
        return value;
      });
      const { answers, warnings } = await deliverTwice(router);
      expect(answers).toEqual([
        [200, 'processed'],
        [200, 'processed'],
      ]);
      // Once per handler, not per delivery; the value itself only when it says no more than its kind.
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.message).toMatch(WARNING);
      expect(WARNING.exec(warnings[0]?.message ?? '')?.[1]).toBe(kind);
      expect(warnings[0]?.meta).toMatchObject({ handler: 'saveIssuedPass', type: 'ag.access_pass.issued' });
      expect(JSON.stringify(warnings)).not.toContain('secret-ish');
    },
  );

  it('an async handler resolving a value, beside one that returns nothing, and a wildcard one: one warning for each handler that returned a value', async () => {
    const router = createEventRouter()
      .on('ag.access_pass.issued', async function first() {
        await Promise.resolve();
        return true;
      })
      .on('ag.access_pass.issued', function second() {
        return undefined;
      })
      .on('ag.access_pass.*', async function third() {
        return Promise.resolve('x');
      });
    const { answers, warnings } = await deliverTwice(router);
    expect(answers.map(([status]) => status)).toEqual([200, 200]);
    expect(warnings.map((w) => w.meta.handler).sort()).toEqual(['first', 'third']);
  });

  it('says nothing when handlers return nothing, or under NODE_ENV=production', async () => {
    expect(
      (await deliverTwice(createEventRouter().on('ag.access_pass.issued', async () => undefined))).warnings,
    ).toEqual([]);
    await open?.close();
    process.env.NODE_ENV = 'production';
    const { answers, warnings } = await deliverTwice(
      createEventRouter().on('ag.access_pass.issued', () => false),
    );
    expect(answers).toEqual([
      [200, 'processed'],
      [200, 'processed'],
    ]);
    expect(warnings).toEqual([]);
  });
});
