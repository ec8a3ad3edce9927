import type { Inbox, ReplayFilter } from '../inbox/inbox';
import type { ResolvedLogger } from '../logger';

/**
 * The longest a bulk replay runs: past it the replay is cancelled between two pages, as Cancel does.
 * It runs on the server, so a page closed mid-way neither stops it nor leaves it running for ever.
 */
const MAX_BULK_REPLAY_MS = 60 * 60_000;
/** How long Cancel waits for the replay to stop (at the end of the page it is putting back). */
const CANCEL_WAIT_MS = 10_000;

/** A bulk replay as the page shows it: what it puts back, how far it came, and how it ended. */
export interface BulkReplayState {
  /**
   * `counting`: the dry run that finds M; `stopping`: cancelled, finishing the page it puts back;
   * `stopped`: cancelled (or past its bound) between two pages.
   */
  state: 'counting' | 'running' | 'stopping' | 'done' | 'stopped' | 'failed';
  /** What it puts back, in words (text of the filter, never markup). */
  what: string;
  /** Who started it, as `authorize` said. */
  identity: string;
  /** Put back so far: N. */
  replayed: number;
  /** How many it found to put back: M (at least N, once the walk saw more than it counted). */
  total: number | null;
}

/** What a bulk replay puts back and how many it expects, when known without a dry run. */
export interface BulkReplayRequest {
  target: ReplayFilter;
  what: string;
  identity: string;
  /** M when known (an issue's count, the status's dead letters); otherwise a dry run counts it. */
  total?: number;
}

/**
 * The console's one bulk replay at a time: it runs on the server with `{ signal, onProgress }`,
 * tells `onChange` after each page, and is stopped by {@link cancel}, by {@link close} or after
 * {@link MAX_BULK_REPLAY_MS}. One per console (per process): two consoles of one inbox each run their
 * own, and the engine's replay keeps them from putting one dead letter back twice.
 */
export class BulkReplays {
  #state: BulkReplayState | undefined;
  #controller: AbortController | undefined;
  #running: Promise<void> | undefined;

  constructor(
    private readonly inbox: Inbox,
    private readonly logger: ResolvedLogger,
    private readonly onChange: (state: BulkReplayState) => void,
  ) {}

  /** The running replay, or the last one's end; undefined before the first. */
  get state(): BulkReplayState | undefined {
    return this.#state === undefined ? undefined : { ...this.#state };
  }

  /** Starts `request` unless one is running (false then: nothing is started). */
  start(request: BulkReplayRequest): boolean {
    if (this.#running !== undefined) return false;
    const controller = new AbortController();
    this.#controller = controller;
    const signal = AbortSignal.any([controller.signal, AbortSignal.timeout(MAX_BULK_REPLAY_MS)]);
    this.#state = {
      state: request.total === undefined ? 'counting' : 'running',
      what: request.what,
      identity: request.identity,
      replayed: 0,
      total: request.total ?? null,
    };
    this.onChange({ ...this.#state });
    this.#running = this.#run(request, signal).finally(() => {
      this.#running = undefined;
      this.#controller = undefined;
    });
    return true;
  }

  async #run(request: BulkReplayRequest, signal: AbortSignal): Promise<void> {
    const state = this.#state!;
    const { target, identity, what } = request;
    try {
      if (state.total === null) {
        state.total = await this.inbox.replay(target, { dryRun: true, signal });
        if (!signal.aborted) state.state = 'running';
        this.onChange({ ...state });
      }
      if (!signal.aborted)
        await this.inbox.replay(target, {
          signal,
          onProgress: ({ replayed, matched }) => {
            state.replayed = replayed;
            state.total = Math.max(state.total ?? 0, matched, replayed);
            this.onChange({ ...state });
          },
        });
      state.state = signal.aborted ? 'stopped' : 'done';
      this.logger.info(
        {
          identity,
          action: 'replay',
          what,
          replayed: state.replayed,
          total: state.total,
          state: state.state,
        },
        `inbox console: ${identity} replayed ${what}: ${state.replayed} of ${String(state.total)}${state.state === 'stopped' ? ', stopped' : ''}`,
      );
    } catch (error) {
      state.state = 'failed';
      this.logger.error(
        { identity, action: 'replay', what, replayed: state.replayed, error: (error as Error).message },
        `inbox console: the replay of ${what} failed after ${state.replayed}; what was put back stays put back`,
      );
    }
    this.onChange({ ...state });
  }

  /** Whether a bulk replay runs now: another is refused until it ends. */
  get busy(): boolean {
    return this.#running !== undefined;
  }

  /**
   * Stops the running replay between two pages (at once: the page it puts back is finished, none
   * after it started) and resolves when it has ended, or after {@link CANCEL_WAIT_MS}; undefined when
   * none was running.
   */
  cancel(): Promise<void> | undefined {
    const running = this.#running;
    if (running === undefined || this.#state === undefined) return undefined;
    this.#controller?.abort();
    this.#state.state = 'stopping';
    this.onChange({ ...this.#state });
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      running,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, CANCEL_WAIT_MS))),
    ]).finally(() => clearTimeout(timer));
  }

  /** Stops the running replay (the console is closing); it ends at its current page. */
  close(): void {
    this.#controller?.abort();
  }
}
