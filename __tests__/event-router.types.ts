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
