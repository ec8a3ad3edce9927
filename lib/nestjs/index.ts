export {
  ServiceWebhooksModule,
  type ServiceWebhooksModuleAsyncOptions,
} from '../adapters/nestjs/service-webhooks-module';
export type { ServiceWebhooksModuleOptions } from '../adapters/nestjs/service-webhooks-module-options';
export { ServiceWebhooks } from '../adapters/nestjs/service-webhooks';
export { OnServiceEvent, type ServiceEvent } from '../adapters/nestjs/on-service-event';
