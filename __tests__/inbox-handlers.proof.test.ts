// Each handler once behind both engines, as a property over many seeded runs (the seed is printed;
// PROPERTY_SEED and PROPERTY_RUNS replay or change it).
import { describeInboxHandlersProperty } from './support/inbox-handlers-property';

describeInboxHandlersProperty(50, 900_000);
