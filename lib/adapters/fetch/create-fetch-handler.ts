import { createReceiverCore, type DrainResult } from '../../core/receiver-core';
import type { ReceiverOptions } from '../../core/receiver-options';
import { webBody } from './web-body';
import { openTelemetryTracing } from '../../observability/open-telemetry-tracing';
import { OptionsError } from '../../options-error';

/** A Fetch API handler: Next.js App Router route handlers, Hono, Bun, Deno. */
export type FetchHandler = ((request: Request) => Promise<Response>) & {
  /** Resolves once every request that entered has been answered and every handler settled, or after `timeoutMs`. */
  drain(options?: { timeoutMs?: number }): Promise<DrainResult>;
};

/**
 * The receiver as `(request: Request) => Promise<Response>`. It answers every request it is given,
 * whatever its path: route to it the one path the webhook was registered with.
 */
export function createFetchHandler(options: ReceiverOptions): FetchHandler {
  if (options?.mtls !== undefined && (options.mtls?.from ?? 'socket') === 'socket') {
    // A Request carries no TLS socket: the certificate can only come from a proxy's header.
    throw new OptionsError(
      'ERR_SW_MTLS',
      'createFetchHandler',
      "mtls.from must name the header your TLS-terminating proxy sets ('x-forwarded-client-cert', 'client-cert', 'nginx' or 'aws-alb'): a Fetch Request has no TLS socket to read a certificate from",
    );
  }
  const core = createReceiverCore(options, 'createFetchHandler', openTelemetryTracing);
  const handler = async function fetchHandler(request: Request): Promise<Response> {
    const { answer, record } = await core.handle({
      method: request.method,
      header: (name) => request.headers.get(name) ?? undefined,
      hasHeaderPrefix: (prefix) => {
        for (const name of request.headers.keys()) if (name.startsWith(prefix)) return true;
        return false;
      },
      body: webBody(request),
    });
    // The platform owns the connection: a Connection header is not ours to send here.
    const { Connection: _connection, ...headers } = answer.headers;
    const response = new Response(answer.body, { status: answer.status, headers });
    queueMicrotask(() => core.report(record));
    return response;
  } as FetchHandler;
  handler.drain = core.drain;
  return handler;
}
