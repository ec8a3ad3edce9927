import { buildEvent, createRedactor, parseScenario, PERSONAL_FIELDS } from 'service-webhooks/testing';

const personal = {
  full_name: 'Ada Lovelace',
  employee_id: 'EMP-20391',
  title: 'Chief Analyst',
  apple_user_id: 'apple.user.7788',
  tag_id: '04a1b2c3d4e5f6',
};
// The credential's fields that are not personal: kept as they are.
const kept = {
  id: 'cred_keep',
  card_template_id: 'ct_keep',
  platform: 'apple',
  protocol: 'seos',
  status: 'issued',
};
const credential = { card_number: '4410023', site_code: '69', file_data: '0a1b2c3d4e5f' };

const issued = buildEvent(
  'ag.access_pass.issued',
  {
    id: 'ap_keep',
    ...personal,
    start_date: '2026-01-02T00:00:00.000Z',
    metadata: {
      contact: 'ada@example.org',
      mobile: '+44 20 7946 0958',
      team: 'red',
      badge: 'B-17',
      since: '2026-01-02',
    },
    details: { ...kept, ...credential },
  },
  { time: '2026-11-25T10:00:00.000Z' },
);
const flat = buildEvent(
  'ag.access_pass.devices.added',
  { access_pass_id: 'ap_keep', ...credential },
  { layout: 'B' },
);

describe('createRedactor', () => {
  const secrets = [
    ...Object.values(personal),
    ...Object.values(credential),
    'ada@example.org',
    '+44 20 7946 0958',
  ];

  it('replaces every personal field and every email or phone in metadata, keeping ids, dates and the rest', () => {
    const redact = createRedactor();
    const text = JSON.stringify([redact(issued), redact(flat)]);
    // Each value quoted whole: a two-digit site code may well appear inside a fake card number.
    for (const secret of secrets) expect(text).not.toContain(JSON.stringify(secret));
    const out = redact(issued);
    expect(out.data).toMatchObject({
      id: 'ap_keep',
      start_date: '2026-01-02T00:00:00.000Z',
      metadata: { team: 'red', badge: 'B-17', since: '2026-01-02' },
      details: kept,
    });
    expect(out.id).toBe(issued.id);
    expect(issued.data.full_name).toBe('Ada Lovelace'); // the original is left alone
  });

  it('gives fakes of the same shape, so a recorded scenario still validates', () => {
    const redact = createRedactor();
    const a = redact(issued).data as Record<string, unknown> & {
      details: Record<string, string>;
      metadata: Record<string, string>;
    };
    expect(a.tag_id).toMatch(/^[0-9a-f]{14}$/);
    expect(a.full_name).toMatch(/^[A-Z][a-z]{2} [A-Z][a-z]{7}$/);
    expect(a.employee_id).toMatch(/^[A-Z]{3}-\d{5}$/);
    expect(a.details.card_number).toMatch(/^\d{7}$/);
    expect(a.details.file_data).toMatch(/^[0-9a-f]{12}$/);
    expect(a.metadata.contact).toMatch(/^[a-z]{3}@[a-z]{7}\.[a-z]{3}$/);
    expect(a.metadata.mobile).toMatch(/^\+\d\d \d\d \d{4} \d{4}$/);
    const scenario = {
      scenarioVersion: 1,
      deliveries: [
        { event: redact(issued), layout: 'A' },
        { event: redact(flat), layout: 'B' },
      ],
    };
    expect(() => parseScenario(scenario, 'test')).not.toThrow();
  });

  it('is stable within a redactor (the same holder stays the same fake) and not across keys', () => {
    const redact = createRedactor();
    expect(redact(issued).data.full_name).toBe(redact(issued).data.full_name);
    expect(redact(flat).data.card_number).toBe(
      (redact(issued).data.details as Record<string, unknown>).card_number,
    );
    const fixed = Buffer.alloc(32, 1);
    expect(createRedactor({ key: fixed })(issued)).toEqual(createRedactor({ key: fixed })(issued));
    expect(createRedactor({ key: Buffer.alloc(32, 2) })(issued).data.full_name).not.toBe(
      createRedactor({ key: fixed })(issued).data.full_name,
    );
  });

  it('redacts the fields the user adds, anywhere in data', () => {
    const out = createRedactor({ fields: ['team'] })(issued);
    expect((out.data.metadata as Record<string, unknown>).team).toMatch(/^[a-z]{3}$/);
    expect((out.data.metadata as Record<string, unknown>).team).not.toBe('red');
  });

  it('never gives a value back as its own fake, however short (a one-digit site code has ten fakes)', () => {
    const kept: string[] = [];
    for (let k = 0; k < 5; k++) {
      const redact = createRedactor({ key: Buffer.alloc(32, k) });
      for (let n = 0; n < 1000; n++) {
        for (const value of [String(n), String(n).padStart(3, '0'), `x${n % 26}`]) {
          const out = redact({ ...issued, data: { site_code: value } });
          if (out.data.site_code === value) kept.push(`key ${k}: ${value}`);
        }
      }
    }
    expect(kept).toEqual([]);
  });

  it('lists the spec fields it redacts', () => {
    expect(PERSONAL_FIELDS).toEqual(
      expect.arrayContaining([...Object.keys(personal), ...Object.keys(credential)]),
    );
  });
});
