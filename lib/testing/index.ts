export {
  buildEvent,
  buildUnknownEvent,
  type BuildEventOptions,
  type DeliveryEnvelope,
} from '../events/build-event';
export type { DataOverrides, LayoutAOverrides, LayoutBOverrides } from '../events/event-overrides';
export {
  deliverEvent,
  sendEvent,
  sendHandshake,
  type HandshakeOptions,
  type SendOptions,
} from './send-delivery';
export { playScenario, type PlayScenarioOptions, type PlayedDelivery } from './play-scenario';
export {
  SCENARIO_VERSION,
  type Scenario,
  type ScenarioDelivery,
  type ScenarioExpectation,
} from '../events/scenario';
export { parseScenario } from '../events/parse-scenario';
export { recordDeliveries, type RecordDeliveriesOptions } from './record-deliveries';
export { createRedactor, PERSONAL_FIELDS, type RedactOptions } from '../events/redact-event';
export type { DeliveryCallback, DeliveryResponse, DeliveryTest, Target } from './delivery-test';
export { DELIVERY_HEADERS } from '../events/delivery-headers';
export { runStoreContract, type MakeStore, type StoreContractOptions } from './store-contract';
export {
  createTestCertificates,
  issueTestCertificate,
  type IssueCertificateOptions,
  type TestCertificate,
  type TestCertificates,
} from '../certificates/create-test-certificates';
