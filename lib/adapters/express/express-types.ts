import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * What the Express adapters read of a request, typed over node's own, as helmet types its
 * middleware: Express 4 and 5 requests both fit, and the published types need no `@types/express`.
 */
export interface ExpressRequestLike extends IncomingMessage {
  /** What a body parser before us produced. */
  body?: unknown;
  /** The path below the mount point (`req.path`). */
  path?: string;
  /** Set when Express matched a route (`app.post(path, …)`). */
  route?: unknown;
}

/** What the Express adapters use of a response: node's, and `res.locals`. */
export interface ExpressResponseLike extends ServerResponse {
  /** Express's `res.locals`: {@link readCloudEvent} leaves the event here ({@link WebhookLocals}). */
  locals: Record<string, unknown>;
}

/** Express's `next`: called with nothing to go on, or with an error. */
export type ExpressNext = (error?: unknown) => void;

/** An Express middleware, structurally: `app.use(it)` in Express 4 and 5. */
export type ExpressMiddleware = (
  req: ExpressRequestLike,
  res: ExpressResponseLike,
  next: ExpressNext,
) => void;

/** An Express error middleware (four parameters), structurally. */
export type ExpressErrorMiddleware = (
  error: unknown,
  req: ExpressRequestLike,
  res: ExpressResponseLike,
  next: ExpressNext,
) => void;
