export {
  webhookReceiver,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from './receiver/webhook-receiver';
export {
  challengeHandshake,
  CHALLENGE_HEADER,
  type ChallengeHandshakeOptions,
} from './receiver/challenge-handshake';
export { bearerAuth, type BearerAuthOptions } from './receiver/bearer-auth';
export {
  readCloudEvent,
  getWebhookEvent,
  type ReadCloudEventOptions,
  type ValidationMode,
  type WebhookLocals,
} from './receiver/read-cloud-event';
export { dispatchEvent, type DispatchEventOptions, type DispatchHandler } from './receiver/dispatch-event';
export { problemHandler, type ProblemHandlerOptions } from './receiver/problem-handler';
export { HttpProblem, type HttpProblemInit, type ProblemFieldError } from './receiver/http-problem';
export type { CloudEventEnvelope } from './receiver/cloud-event-envelope';
export * from './events/catalogue';
export type * from './events/data-schemas';
export type * from './events/webhook-event';
export { parseSchemaVersion } from './events/normalize-event';
export {
  createEventRouter,
  EventRouter,
  type EventHandler,
  type ErrorHandler,
  type HandlerContext,
  type MatchedHandlers,
} from './events/event-router';
export type { ClaimResult, IdempotencyStore, KeyState } from './idempotency/idempotency-store';
export { MemoryStore, type MemoryStoreOptions } from './idempotency/memory-store';
export type { Logger, LogLevel, ResolvedLogger } from './logger';
export { OptionsError, type OptionsErrorCode } from './options-error';
