import type * as OpenTelemetryApi from '@opentelemetry/api';

/**
 * Where `@opentelemetry/api` 1.x keeps every registration (tracer provider, context manager,
 * propagator): absent until an application registers an SDK.
 */
const REGISTRATIONS = Symbol.for('opentelemetry.js.api.1');

let api: typeof OpenTelemetryApi | undefined;

/**
 * Whether anything registered with OpenTelemetry in this process. Until something did, there is
 * nothing to trace into, so the API (44 modules) is not even loaded: a receiver without tracing
 * starts as fast as one that never heard of it.
 */
export function openTelemetryRegistered(): boolean {
  return (globalThis as Record<symbol, unknown>)[REGISTRATIONS] !== undefined;
}

/** `@opentelemetry/api`, loaded the first time tracing has work to do. */
export function openTelemetryApi(): typeof OpenTelemetryApi {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, by design
  api ??= require('@opentelemetry/api') as typeof OpenTelemetryApi;
  return api;
}
