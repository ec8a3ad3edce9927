import { EVENT_TYPES, entityOf, type EventType } from '../lib';
import { normalizeEvent } from '../lib/events/normalize-event';
import { buildEvent, type DeliveryEnvelope } from '../lib/testing';

const normalized = (envelope: DeliveryEnvelope) =>
  normalizeEvent(envelope, envelope.data, envelope as unknown as Record<string, unknown>);

/** The field that names each family's entity in layout A, and in layout B. */
const ENTITY_FIELDS: [prefix: string, kind: string, a: string, b: string][] = [
  ['ag.access_pass.', 'access_pass', 'id', 'access_pass_id'],
  ['ag.card_template.', 'card_template', 'card_template_id', 'card_template_id'],
  ['ag.landing_page.', 'landing_page', 'landing_page_id', 'landing_page_id'],
  ['ag.credential_profile.', 'credential_profile', 'credential_profile_id', 'credential_profile_id'],
  ['ag.account_balance.', 'account', 'account_id', 'account_id'],
];
const fieldsOf = (type: string) => ENTITY_FIELDS.find(([prefix]) => type.startsWith(prefix));

describe('event.entity', () => {
  it.each(EVENT_TYPES.flatMap((type) => (['A', 'B'] as const).map((layout) => [type, layout] as const)))(
    '%s in layout %s names the spec’s id field, or nothing',
    (type: EventType, layout) => {
      const fields = fieldsOf(type);
      const field = fields === undefined ? undefined : layout === 'A' ? fields[2] : fields[3];
      const envelope = buildEvent(type, (field === undefined ? {} : { [field]: 'ent_42' }) as never, {
        layout,
      });
      expect(normalized(envelope).entity).toEqual(
        fields === undefined ? null : { kind: fields[1], id: 'ent_42' },
      );
    },
  );

  it.each([
    ['a null id', { id: null }],
    ['an empty id', { id: '' }],
  ])('is null for an access-pass event with %s', (_name, data) => {
    expect(normalized(buildEvent('ag.access_pass.updated', data)).entity).toBeNull();
  });

  it('reads the pass for an access-pass event, not the template it also names', () => {
    const event = buildEvent('ag.access_pass.updated', { id: 'pass_1', card_template_id: 'tpl_1' });
    expect(normalized(event).entity).toEqual({ kind: 'access_pass', id: 'pass_1' });
  });

  it('counts a type the catalogue does not know yet in its family, and no other', () => {
    expect(entityOf('ag.access_pass.transferred', { id: 'p' } as never)).toEqual({
      kind: 'access_pass',
      id: 'p',
    });
    expect(entityOf('ag.card_template_pair.created', { card_template_id: 't' } as never)).toBeNull();
    expect(entityOf('other.access_pass.x', { id: 'p' } as never)).toBeNull();
  });
});
