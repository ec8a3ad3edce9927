// Each handler once behind both engines, as a property: a few seeded runs in npm test (the seed is
// printed; PROPERTY_SEED and PROPERTY_RUNS replay or widen it), many in inbox-handlers.proof.test.ts.
import { describeInboxHandlersProperty } from './support/inbox-handlers-property';

describeInboxHandlersProperty(3, 300_000);
