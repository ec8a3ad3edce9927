// Compile-only: `npm run typecheck` checks this file; jest never runs it. Each @ts-expect-error is a
// mistake @OnServiceEvent must refuse at compile time: if it compiled, the directive itself is an error.
import { OnServiceEvent, ServiceWebhooksModule, type ServiceEvent } from 'service-webhooks/nestjs';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_proof: T): void => undefined;

export class Handlers {
  @OnServiceEvent('ag.access_pass.issued')
  issued(_event: ServiceEvent<'ag.access_pass.issued'>) {
    expectType<Equal<typeof _event.type, 'ag.access_pass.issued'>>(true);
  }

  // A family pattern narrows to the family's types.
  @OnServiceEvent('ag.access_pass.*', { ordering: 'newest-wins' })
  family(_event: ServiceEvent<'ag.access_pass.*'>) {
    expectType<Equal<Extract<typeof _event.type, 'ag.card_template.created'>, never>>(true);
  }

  // A method that takes no event, or any event, is a handler of every type.
  @OnServiceEvent(['ag.access_pass.issued', 'ag.card_template.created'])
  any() {}

  // @ts-expect-error a misspelt type
  @OnServiceEvent('ag.access_pass.isued')
  misspelt() {}

  // @ts-expect-error the method takes another type's event than the one it handles
  @OnServiceEvent('ag.access_pass.issued')
  otherType(_event: ServiceEvent<'ag.card_template.created'>) {}

  // @ts-expect-error a pattern's events are not all of one type
  @OnServiceEvent('ag.access_pass.*')
  tooNarrow(_event: ServiceEvent<'ag.access_pass.issued'>) {}

  // @ts-expect-error an ordering that does not exist
  @OnServiceEvent('ag.access_pass.issued', { ordering: 'oldest-wins' })
  badOrdering() {}

  // A name of its own, stable across deploys; with ordering beside it.
  @OnServiceEvent('ag.access_pass.*', { name: 'crm-sync', ordering: 'newest-wins' })
  named() {}

  // @ts-expect-error a misspelt option (name)
  @OnServiceEvent('ag.access_pass.issued', { nme: 'crm-sync' })
  misspeltOption() {}

  // @ts-expect-error a name is a string
  @OnServiceEvent('ag.access_pass.issued', { name: 42 })
  numberName() {}
}

// @ts-expect-error an option the module does not take
ServiceWebhooksModule.forRoot({ bearerTokens: ['t'], pth: '/hooks' });
// @ts-expect-error the factory must return the options
ServiceWebhooksModule.forRootAsync({ useFactory: () => 42 });
