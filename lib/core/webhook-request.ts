/**
 * Where a request's body comes from. Adapters build one per request; the core reads it once, bounded
 * in size and time.
 */
export interface BodySource {
  /**
   * Reads the whole body, at most `limit` bytes and within `timeoutMs`. Rejects with an HttpProblem
   * (413, 408, 400) when it cannot.
   */
  read(limit: number, timeoutMs: number): Promise<Uint8Array>;
  /**
   * The whole body when it has already arrived (node's parser buffered it with the head), at most
   * `limit` bytes, without a promise; `undefined` when it has not, and the core then calls `read`.
   * Throws an HttpProblem (413, 400) as `read` rejects. Optional: a door without it is always read.
   */
  readNow?(limit: number): Uint8Array | undefined;
  /** False when the request certainly carries no body (no Content-Length above 0, not chunked, no stream). */
  readonly hasBody: boolean;
  /** A value another parser already produced (`express.json()`), or `undefined` when the bytes are unread. */
  readonly parsed?: { value: unknown } | undefined;
}

/** A request as the core sees it: no framework type, just what the pipeline reads. */
export interface WebhookRequest {
  method: string;
  /** A header by lowercase name, repeated values joined with `, `; `undefined` when absent. */
  header(name: string): string | undefined;
  /**
   * Whether any header's name starts with `prefix` (lowercase). Only the handshake asks (is this a
   * binary-mode event?), so adapters answer it lazily and deliveries never pay for it.
   */
  hasHeaderPrefix(prefix: string): boolean;
  body: BodySource;
  /** The transport's socket when it has one (node:http), for mTLS; `undefined` for Fetch. */
  socket?: unknown;
}

/** What the core answers: a status, headers, and the body text. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}
