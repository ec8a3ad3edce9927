import { buildEvent } from 'service-webhooks/testing';
import { parseScenario } from '../lib/events/parse-scenario';

const issued = buildEvent('ag.access_pass.issued', { id: 'ap_1' }, { time: '2026-11-25T10:00:00.000Z' });
const flat = buildEvent('ag.access_pass.devices.added', {}, { layout: 'B' });
type Loose = Record<string, unknown>;
type Good = Loose & {
  deliveries: (Loose & {
    event: Loose & { type: string; time: string; data: Loose };
    repeat?: number;
    delayMs?: number;
    expect?: Loose;
  })[];
};
const good = (): Good => ({
  scenarioVersion: 1,
  deliveries: [
    {
      event: { ...structuredClone(issued) },
      layout: 'A',
      delayMs: 0,
      repeat: 1,
      expect: { status: 200, body: { status: 'processed' } },
    },
    { event: { ...structuredClone(flat) }, layout: 'B' },
  ],
});

describe('parseScenario', () => {
  it('returns a good scenario as it is', () => {
    expect(parseScenario(good(), 'test')).toEqual(good());
  });

  it.each(['A', 'B'] as const)(
    "keeps an ag.webhook.cert_expiring in layout %s as the emulator sends it: the spec shows none of that family's data",
    (layout) => {
      const scenario = {
        scenarioVersion: 1,
        deliveries: [{ event: buildEvent('ag.webhook.cert_expiring', {}, { layout }), layout }],
      };
      expect(scenario.deliveries[0]!.event.data).toHaveProperty('certificate_fingerprint');
      expect(parseScenario(structuredClone(scenario), 'test')).toEqual(scenario);
    },
  );

  const broken: [string, (s: Good) => unknown, RegExp][] = [
    [
      'an unknown event type',
      (s) => ((s.deliveries[0]!.event.type = 'ag.access_pass.isued'), s),
      /^\[service-webhooks\] test: deliveries\[0\]\.event\.type: unknown event type "ag\.access_pass\.isued"; did you mean "ag\.access_pass\.issued"\?/,
    ],
    [
      'a misspelt data field',
      (s) => ((s.deliveries[0]!.event.data.ful_name = 'Ada'), s),
      /^\[service-webhooks\] test: deliveries\[0\]\.event\.data: .*ful_name.*did you mean "full_name"/,
    ],
    [
      'a misspelt nested field',
      (s) => (((s.deliveries[0]!.event.data.details as Loose).card_numbr = '1'), s),
      /deliveries\[0\]\.event\.data: .*card_numbr/,
    ],
    [
      'an unknown key of a delivery',
      (s) => ((s.deliveries[1]!.delay = 5), s),
      /^\[service-webhooks\] test: deliveries\[1\]: unknown key "delay"; did you mean "delayMs"\?/,
    ],
    [
      'an unknown key of the file',
      (s) => ({ ...s, deliverys: [] }),
      /test: \(the top level\): unknown key "deliverys"; did you mean "deliveries"\?/,
    ],
    [
      'an unknown key of an event',
      (s) => ((s.deliveries[0]!.event.sorce = 'x'), s),
      /test: deliveries\[0\]\.event: unknown key "sorce"; did you mean "source"\?/,
    ],
    [
      'an unknown key of an expectation',
      (s) => ((s.deliveries[0]!.expect!.staus = 200), s),
      /test: deliveries\[0\]\.expect: unknown key "staus"; did you mean "status"\?/,
    ],
    [
      'another version',
      (s) => ({ ...s, scenarioVersion: 2 }),
      /test: scenarioVersion: must be 1, the version this package reads/,
    ],
    [
      'a layout that contradicts the event',
      (s) => ((s.deliveries[1]!.layout = 'A'), s),
      /test: deliveries\[1\]\.layout: is "A" but the event is in layout B; write "layout": "B"/,
    ],
    [
      'a time that is not RFC 3339',
      (s) => ((s.deliveries[0]!.event.time = 'yesterday'), s),
      /test: deliveries\[0\]\.event\.time: must be an RFC 3339 timestamp/,
    ],
    ['a negative repeat', (s) => ((s.deliveries[0]!.repeat = -1), s), /test: deliveries\[0\]\.repeat: /],
    [
      'a repeat past the bound',
      (s) => ((s.deliveries[0]!.repeat = 101), s),
      /test: deliveries\[0\]\.repeat: /,
    ],
    [
      'a delay past six hours',
      (s) => ((s.deliveries[0]!.delayMs = 6 * 3600_000 + 1), s),
      /test: deliveries\[0\]\.delayMs: /,
    ],
    [
      'deliveries that are not a list',
      (s) => ({ ...s, deliveries: {} }),
      /test: deliveries: must be an array/,
    ],
    [
      'data that is not an object',
      (s) => ((s.deliveries[0]!.event.data = [] as unknown as Loose), s),
      /test: deliveries\[0\]\.event\.data: must be an object/,
    ],
    ['a file that is not an object', () => [], /test: \(the top level\): /],
  ];
  it.each(broken)('refuses %s, naming the path inside the file', (_, breakIt, message) => {
    expect(() => parseScenario(breakIt(good()), 'test')).toThrow(message);
  });
});
