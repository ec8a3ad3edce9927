export { buildEvent, type BuildEventOptions, type DeliveryEnvelope } from './build-event';
export {
  deliverEvent,
  sendEvent,
  sendHandshake,
  DELIVERY_HEADERS,
  type HandshakeOptions,
  type SendOptions,
  type Target,
} from './send-delivery';
