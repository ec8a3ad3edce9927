import type { InboxStatus } from '../inbox/inbox';
import type { ResolvedLogger } from '../logger';
import { consoleProblem } from './console-problem';
import type { ConsoleAnswer, EventSink } from './console-request';

/** Streams open at once across every client: more are refused with 503, not queued. */
export const MAX_STREAMS = 32;
/** Streams one client (its identity from one address) may hold: a few tabs, not a loop of them. */
export const MAX_STREAMS_PER_CLIENT = 4;
/**
 * Unsent bytes one stream may hold. A client that stops reading would otherwise pile up status
 * lines; past this its stream is ended, and its page reconnects and gets the status afresh.
 */
export const MAX_STREAM_BUFFER = 256 * 1024;
/** How often the inbox's status is read while any page follows it: one read for all of them. */
export const POLL_MS = 1_000;
const HEARTBEAT_MS = 15_000;

/**
 * The inbox's status to every open page as server-sent events (`event: status`), read once a
 * second while at least one page listens and not at all otherwise; a status is sent when it
 * changed. A bulk replay's progress goes out as `event: replay`, once a page of it is put back.
 * Bounded in streams overall, per client and in bytes per stream.
 */
export class StatusFeed {
  readonly #streams = new Set<EventSink>();
  readonly #perClient = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #last = '';
  /** The last bulk replay's progress, sent to every newcomer too: a reload still shows it. */
  #replay = '';
  #failing = false;

  constructor(
    private readonly read: () => Promise<InboxStatus>,
    private readonly logger: ResolvedLogger,
  ) {}

  /** The answer to one request for the stream: the stream, or 503 when its client or the console is full. */
  open(client: string): ConsoleAnswer {
    const mine = this.#perClient.get(client) ?? 0;
    if (this.#streams.size >= MAX_STREAMS || mine >= MAX_STREAMS_PER_CLIENT)
      return consoleProblem(
        503,
        'console-streams-full',
        'Service Unavailable',
        mine >= MAX_STREAMS_PER_CLIENT
          ? `This client already follows the inbox in ${MAX_STREAMS_PER_CLIENT} tabs; close some and reload.`
          : `The inbox console serves at most ${MAX_STREAMS} live pages at once; close some and reload.`,
        { 'Retry-After': '5' },
      );
    this.#perClient.set(client, mine + 1);
    return {
      status: 200,
      headers: {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
      },
      stream: (sink) => this.#follow(sink, client),
    };
  }

  #follow(sink: EventSink, client: string): void {
    this.#streams.add(sink);
    const heartbeat = setInterval(() => this.#send(sink, ': keep-alive\n\n'), HEARTBEAT_MS);
    let closed = false;
    sink.onClose(() => {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      this.#streams.delete(sink);
      const left = (this.#perClient.get(client) ?? 1) - 1;
      if (left === 0) this.#perClient.delete(client);
      else this.#perClient.set(client, left);
      if (this.#streams.size === 0) this.#stop();
    });
    // The newcomer gets the status now, not at the next change.
    if (this.#last !== '') this.#send(sink, this.#last);
    if (this.#replay !== '') this.#send(sink, this.#replay);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => void this.#poll(), POLL_MS);
      void this.#poll();
    }
  }

  #send(sink: EventSink, text: string): void {
    if (sink.buffered() > MAX_STREAM_BUFFER) {
      sink.end();
      return;
    }
    sink.write(text);
  }

  async #poll(): Promise<void> {
    let status: InboxStatus;
    try {
      status = await this.read();
    } catch (error) {
      if (!this.#failing)
        this.logger.warn(
          { error: error instanceof Error ? error.message : String(error) },
          'inbox console: the inbox did not answer its status; the pages show the last one',
        );
      this.#failing = true;
      return;
    }
    this.#failing = false;
    const line = `event: status\ndata: ${JSON.stringify(status)}\n\n`;
    if (line === this.#last) return;
    this.#last = line;
    for (const sink of this.#streams) this.#send(sink, line);
  }

  /** Sends a bulk replay's progress (`event: replay`) to every open page, as each page is put back. */
  replay(state: unknown): void {
    this.#replay = `event: replay\ndata: ${JSON.stringify(state)}\n\n`;
    for (const sink of this.#streams) this.#send(sink, this.#replay);
  }

  #stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#last = '';
  }

  /** Ends every stream (the console is being closed). */
  close(): void {
    for (const sink of [...this.#streams]) sink.end();
    this.#stop();
  }
}
