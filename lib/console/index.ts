export {
  ConsoleClient,
  type ConsoleClientOptions,
  type ListOptions,
  type VerifyResult,
  type WaitUntilVerifiedOptions,
} from './console-client';
export { ConsoleApiError, ConsoleNetworkError, ConsoleValidationError } from './console-errors';
export type {
  AuthMethod,
  ConsoleWebhook,
  CreatedWebhook,
  CreateWebhookInput,
  NotAnArray,
  WebhookPage,
} from './console-wire';
export { signPayload, verifyPayloadSignature } from './sign-payload';
