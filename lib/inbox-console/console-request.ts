/** One request to the console, as a door hands it to the core: no transport type in it. */
export interface ConsoleRequest<Raw> {
  method: string;
  /** The path under the console's mount point, starting with `/`. */
  path: string;
  query: URLSearchParams;
  /** Where the console is mounted (`''` at the root): every link starts with it. */
  base: string;
  /** A request header by lowercase name (several joined with `, `), or undefined. */
  header(name: string): string | undefined;
  /** The peer's address as the socket saw it (not a forwarded header), when the door knows it. */
  remoteAddress: string | undefined;
  /** The request body as UTF-8, rejecting past `limit` bytes: only ever read after `authorize`. */
  readBody(limit: number): Promise<string>;
  /** The request as the door received it, for `authorize`. */
  raw: Raw;
}

/** Where a server-sent event stream writes, on whichever transport. */
export interface EventSink {
  write(text: string): void;
  /** Bytes written and not yet taken by the client. */
  buffered(): number;
  /** Ends the stream from our side. */
  end(): void;
  /** Calls `listener` once when the client goes away or the stream ends. */
  onClose(listener: () => void): void;
}

/** What the core answers: a whole body, or a stream it writes to as events come. */
export type ConsoleAnswer =
  | { status: number; headers: Record<string, string>; body: string }
  | { status: 200; headers: Record<string, string>; stream: (sink: EventSink) => void };
