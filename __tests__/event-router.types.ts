// Compile-only: `npm run typecheck` checks this file; jest never runs it.
import {
  createEventRouter,
  webhookReceiver,
  type AccessPassEventType,
  type CredentialDetails,
  type Device,
} from '../lib';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_proof: T): void => undefined;

createEventRouter()
  .on('ag.access_pass.issued', (event) => {
    expectType<Equal<typeof event.type, 'ag.access_pass.issued'>>(true);
    expectType<Equal<typeof event.data.details, CredentialDetails>>(true);
    const cardNumber: string | null = event.data.details.card_number;
    void cardNumber;
    expectType<Equal<typeof event.data.devices, null>>(true);
  })
  .on('ag.access_pass.devices.added', (event) => {
    expectType<Equal<typeof event.data.devices, [Device]>>(true);
    const device: Device = event.data.devices[0];
    void device;
  })
  .on('ag.access_pass.*', (event) => {
    expectType<Equal<typeof event.type, AccessPassEventType>>(true);
    if (event.type === 'ag.access_pass.issued') {
      const details: CredentialDetails = event.data.details;
      void details;
    }
    // @ts-expect-error details may be null on other access-pass events
    const details: CredentialDetails = event.data.details;
    void details;
  })
  .on('ag.account_balance.low', (event) => {
    const total: number =
      event.data.current_balance + event.data.threshold + event.data.amount_below_threshold;
    const names: string = event.data.account_id + event.data.organization_name;
    void [total, names];
  })
  .on('ag.card_template.*', (event) => {
    const id: string = event.data.card_template_id;
    const metadata: Record<string, unknown> = event.data.metadata;
    void [id, metadata];
  })
  .on(['ag.hid_org.created', 'ag.landing_page.updated'], (event) => {
    expectType<Equal<typeof event.type, 'ag.hid_org.created' | 'ag.landing_page.updated'>>(true);
    // @ts-expect-error only the balance events promise a number
    const balance: number = event.data.current_balance;
    void balance;
  })
  .onAny((event) => {
    const type: string = event.type;
    void type;
  });

// @ts-expect-error not a type of the catalogue
createEventRouter().on('ag.nope', () => undefined);
// @ts-expect-error not a pattern of the catalogue
createEventRouter().on('ag.access_pass.issued.*', () => undefined);
// @ts-expect-error a pattern must end at a dot
createEventRouter().on('ag.access*', () => undefined);
createEventRouter().on('ag.access_pass.updated', (event) => {
  // @ts-expect-error no details promised on a non-issued event
  const details: CredentialDetails = event.data.details;
  void details;
});

// Each family's data has only its family's fields (spec 2.2, rules 2–5): another family's is an error.
createEventRouter()
  // @ts-expect-error an access pass event carries no balance (issue 22)
  .on('ag.access_pass.issued', (e) => e.data.current_balance)
  // @ts-expect-error a card template has no devices
  .on('ag.card_template.created', (e) => e.data.devices)
  // @ts-expect-error a card template has no holder
  .on('ag.card_template.published', (e) => e.data.full_name)
  // @ts-expect-error an account balance has no holder
  .on('ag.account_balance.low', (e) => e.data.full_name)
  // @ts-expect-error an account balance names no template
  .on('ag.account_balance.low', (e) => e.data.card_template_id)
  // @ts-expect-error a landing page has no protocol
  .on('ag.landing_page.created', (e) => e.data.protocol)
  // @ts-expect-error only attached_to_template names a template
  .on('ag.landing_page.created', (e) => e.data.card_template_id)
  // @ts-expect-error a credential profile is not a landing page
  .on('ag.credential_profile.created', (e) => e.data.landing_page_id)
  // @ts-expect-error an HID org has no organization_name (spec 2.2 gives it to account_balance events)
  .on('ag.hid_org.created', (e) => e.data.organization_name)
  // @ts-expect-error a card template pair has no holder
  .on('ag.card_template_pair.created', (e) => e.data.state)
  // @ts-expect-error the webhook family carries only metadata (rule 8: its data is not shown)
  .on('ag.webhook.cert_expiring', (e) => e.data.id)
  // @ts-expect-error a family pattern gets the family's fields only
  .on('ag.access_pass.*', (e) => e.data.account_id)
  // @ts-expect-error a handler of several families gets only the fields they share
  .on(['ag.landing_page.created', 'ag.credential_profile.created'], (e) => e.data.landing_page_id);

// And every field a family carries is there, typed as the spec says.
createEventRouter()
  .on('ag.access_pass.updated', (e) => {
    const holder: [string | null, string | null, string | null] = [
      e.data.id,
      e.data.full_name,
      e.data.tag_id,
    ];
    const templates: unknown[] | null = e.data.card_templates;
    const hidOrg: string | null = e.data.hid_org_id;
    const devices: Device[] | null = e.data.devices;
    void [holder, templates, hidOrg, devices];
  })
  .on('ag.card_template.updated', (e) => {
    const seos: string | null = e.data.hid_org_id;
    void seos;
  })
  .on('ag.card_template_pair.created', (e) => {
    const pair: [string | null, unknown[] | null] = [e.data.card_template_id, e.data.card_templates];
    void pair;
  })
  .on(['ag.landing_page.attached_to_template', 'ag.credential_profile.attached_to_template'], (e) => {
    const template: string | null = e.data.card_template_id;
    void template;
  })
  .on('ag.landing_page.*', (e) => {
    const page: [string | null, Record<string, unknown> | null] = [e.data.landing_page_id, e.data.metadata];
    void page;
  })
  .on('ag.credential_profile.created', (e) => {
    const profile: [string | null, string | null] = [e.data.credential_profile_id, e.data.protocol];
    void profile;
  })
  .on('ag.hid_org.*', (e) => {
    const org: string | null = e.data.hid_org_id;
    void org;
  })
  .on('ag.webhook.cert_expiring', (e) => {
    const metadata: Record<string, unknown> | null = e.data.metadata;
    // The emulator's fields the spec does not show are extras: read them from the envelope.
    const raw: unknown = e.raw.data;
    void [metadata, raw];
  })
  .on(['ag.landing_page.created', 'ag.credential_profile.created'], (e) => {
    // What two families share: metadata, and each one's fields once the type is checked.
    const metadata: Record<string, unknown> | null = e.data.metadata;
    const id: string | null =
      e.type === 'ag.landing_page.created' ? e.data.landing_page_id : e.data.credential_profile_id;
    void [metadata, id];
  })
  .onAny((e) => {
    // Any event: its family's fields once the type is checked, or a field by presence.
    const id: string | null = 'id' in e.data ? e.data.id : null;
    const balance: number | null = e.type === 'ag.account_balance.low' ? e.data.current_balance : null;
    void [id, balance];
  });

// The logger option takes console, a pino-shaped logger, or any subset of the four methods.
interface PinoLike {
  info(obj: object, msg?: string, ...args: unknown[]): void;
  warn(obj: object, msg?: string, ...args: unknown[]): void;
  error(obj: object, msg?: string, ...args: unknown[]): void;
  debug(obj: object, msg?: string, ...args: unknown[]): void;
}
declare const pino: PinoLike;
webhookReceiver({ bearerTokens: ['t'], router: createEventRouter(), logger: console });
webhookReceiver({ bearerTokens: ['t'], router: createEventRouter(), logger: pino });
webhookReceiver({ bearerTokens: ['t'], router: createEventRouter(), logger: { error: () => undefined } });
// @ts-expect-error a logger must be an object, not a function
webhookReceiver({ bearerTokens: ['t'], router: createEventRouter(), logger: console.log });

// The ordering option: one value, checked by the compiler too.
createEventRouter().on('ag.access_pass.updated', () => undefined, { ordering: 'newest-wins' });
createEventRouter().on('ag.access_pass.*', (event) => void event.entity?.id, {});
// @ts-expect-error only 'newest-wins' is an ordering
createEventRouter().on('ag.access_pass.updated', () => undefined, { ordering: 'oldest-wins' });
// @ts-expect-error a misspelt option
createEventRouter().on('ag.access_pass.updated', () => undefined, { orderng: 'newest-wins' });
createEventRouter().on('ag.card_template.updated', (event) => {
  const entity: { kind: string; id: string } | null = event.entity;
  void entity;
});
