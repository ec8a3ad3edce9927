export {
  serviceWebhooks,
  type ServiceWebhooksDecorator,
  type ServiceWebhooksOptions,
} from '../adapters/fastify/service-webhooks';
