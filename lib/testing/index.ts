export { buildEvent, buildUnknownEvent, type BuildEventOptions, type DeliveryEnvelope } from './build-event';
export type { DataOverrides, LayoutAOverrides, LayoutBOverrides } from './event-overrides';
export {
  deliverEvent,
  sendEvent,
  sendHandshake,
  type HandshakeOptions,
  type SendOptions,
  type Target,
} from './send-delivery';
export { DELIVERY_HEADERS } from './delivery-headers';
export { runStoreContract, type MakeStore, type StoreContractOptions } from './store-contract';
export {
  createTestCertificates,
  issueTestCertificate,
  type IssueCertificateOptions,
  type TestCertificate,
  type TestCertificates,
} from './create-test-certificates';
