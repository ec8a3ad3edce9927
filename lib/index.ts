export {
  webhookReceiver,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from './adapters/express/webhook-receiver';
export {
  challengeHandshake,
  CHALLENGE_HEADER,
  type ChallengeHandshakeOptions,
} from './adapters/express/challenge-handshake';
export { bearerAuth, type BearerAuthOptions } from './adapters/express/bearer-auth';
export {
  readCloudEvent,
  getWebhookEvent,
  type ReadCloudEventOptions,
  type ValidationMode,
  type WebhookLocals,
} from './adapters/express/read-cloud-event';
export {
  dispatchEvent,
  type DispatchEventOptions,
  type DispatchHandler,
} from './adapters/express/dispatch-event';
export type { IdempotencyOptions } from './idempotency/idempotency-options';
export { problemHandler, type ProblemHandlerOptions } from './adapters/express/problem-handler';
export type {
  ExpressErrorMiddleware,
  ExpressMiddleware,
  ExpressNext,
  ExpressRequestLike,
  ExpressResponseLike,
} from './adapters/express/express-types';
export {
  createNodeHandler,
  type NodeHandler,
  type NodeHandlerOptions,
} from './adapters/node/create-node-handler';
export { createFetchHandler, type FetchHandler } from './adapters/fetch/create-fetch-handler';
export type { ReceiverOptions } from './core/receiver-options';
export type { DrainResult } from './core/receiver-core';
export type { BookkeepingEvent } from './idempotency/bookkeeping-event';
export type {
  DeliveryListener,
  DeliveryOutcome,
  DeliveryRecord,
  HandlerRun,
  HandlerRunOutcome,
  ShedReason,
} from './core/delivery-record';
export type { TokenSource } from './core/auth/token-verifier';
export { HttpProblem, type HttpProblemInit, type ProblemFieldError } from './core/http-problem';
export type { CloudEventEnvelope } from './core/event/cloud-event-envelope';
export * from './events/catalogue';
export type {
  AccessPassState,
  CredentialDetails,
  Device,
  EventData,
  Metadata,
  OpenEnum,
  Protocol,
} from './events/data-schemas';
export type * from './events/webhook-event';
export type { DataFieldOf, LayoutBFieldOf } from './events/family-fields';
export { entityOf, parseSchemaVersion } from './events/normalize-event';
export { RetryLater } from './events/retry-later';
export { RateLimited } from './events/rate-limited';
export {
  createEventRouter,
  EventRouter,
  type EventHandler,
  type ErrorHandler,
  type HandlerContext,
  type MatchedHandlers,
  type OnOptions,
} from './events/event-router';
export type { ClaimResult, HandlersClaim, IdempotencyStore, KeyState } from './idempotency/idempotency-store';
export type {
  EntityLeaseResult,
  EntityOrderingStore,
  EntityPosition,
} from './idempotency/entity-ordering-store';
export { MemoryStore, type MemoryStoreOptions } from './idempotency/memory-store';
export type { Logger, LogLevel, LogMethod, ResolvedLogger } from './logger';
export { OptionsError, type OptionsErrorCode } from './options-error';
export {
  clientCertificateAuth,
  type ClientCertificateAuthOptions,
} from './adapters/express/client-certificate-auth';
// The mTLS code itself loads on first use (lib/lazy-mtls.ts): a bearer-token receiver never parses it.
export { createClientCertificateVerifier } from './lazy-mtls';
export { CERTIFICATE_HEADERS } from './mtls/certificate-headers';
export type * from './mtls/mtls-options';
export type {
  DeadLetter,
  DeadLettersOptions,
  Inbox,
  InboxBackoff,
  InboxStatus,
  InboxWorker,
  InboxWorkerOptions,
  JobHandlerRun,
  JobListener,
  JobRecord,
  ReplayFilter,
} from './inbox/inbox';
export type { InboxIssue, IssueAlert, IssuesQuery, ErrorFingerprint } from './inbox/inbox-issue';
export type { HandlerState, QueuedDelivery } from './inbox/queued-delivery';
export type { ReplayOptions, ReplayProgress } from './inbox/replay-pages';
export type { WorkerRate } from './inbox/worker-rate';
