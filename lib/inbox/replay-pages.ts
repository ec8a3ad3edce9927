/** How far a replay has come, as {@link ReplayOptions.onProgress} is told after each page. */
export interface ReplayProgress {
  /** Dead letters put back so far (with `dryRun`, always 0). */
  replayed: number;
  /** Dead letters the filter matched so far, the replayed ones included. */
  matched: number;
}

/** How {@link Inbox.replay} walks the dead letters it matches, whatever the filter. */
export interface ReplayOptions {
  /**
   * Stops the replay between two pages once aborted: the pages already put back stay put back (a
   * dead letter is never half replayed), and the replay resolves how many it put back so far. An
   * already aborted signal replays nothing. Defaults to none: the replay runs to its end.
   */
  signal?: AbortSignal;
  /**
   * Called after each page of dead letters (500 on BullMQ, 100 on pg-boss) with the counts so far.
   * What it throws ends the replay (rejecting with it), and what was put back stays put back.
   * Defaults to none.
   */
  onProgress?: (progress: ReplayProgress) => unknown;
  /**
   * Walks and counts the matching dead letters without putting any back: resolves how many a replay
   * would put back now (`onProgress` is called as for a replay, `replayed` staying 0). Defaults to
   * `false`.
   */
  dryRun?: boolean;
  /**
   * Only with one event id: the replayed job runs only these handlers (by name), each once more even
   * if its success was recorded before (asking by name is asking for it), and retried until it
   * succeeds; once they have, the job completes if every other handler of the event had succeeded
   * before, and goes back to the dead letters otherwise (saying which are left). An unknown name is
   * refused: checked against the handlers the dead letter recorded, and, when a worker was started
   * on this inbox in this process, the ones its router runs for the event (with a "did you mean").
   * Defaults to none: a plain replay runs every handler without a recorded success.
   */
  handlers?: readonly string[];
}

/** One page of a replay walk, as an engine reports it. */
export interface ReplayPage {
  /** How many dead letters on the page the filter matched. */
  matched: number;
  /** How many of those the page put back (fewer when another replay took some first). */
  replayed: number;
  /** True when no page follows. */
  done: boolean;
}

/**
 * The one walk of every replay filter on every engine: `nextPage` reads, matches and puts back one
 * page (the engine's unit that is never half done), and this loop counts, reports and stops between
 * pages. A new filter changes what `nextPage` matches, never this loop.
 */
export async function replayPages(
  nextPage: () => Promise<ReplayPage>,
  options: ReplayOptions,
): Promise<number> {
  const { signal, onProgress } = options;
  const progress: ReplayProgress = { replayed: 0, matched: 0 };
  while (signal?.aborted !== true) {
    const page = await nextPage();
    progress.replayed += page.replayed;
    progress.matched += page.matched;
    onProgress?.({ ...progress });
    if (page.done) break;
  }
  return options.dryRun === true ? progress.matched : progress.replayed;
}
