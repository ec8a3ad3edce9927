import { OptionsError } from '../options-error';

/**
 * An enqueue refused because the queue held more than its `maxDepth`: the receiver answers 503 +
 * `Retry-After` (shed, `queue-depth`) and the Service delivers the event again later.
 */
export class InboxFull extends Error {
  readonly code = 'ERR_SW_INBOX_FULL';
  constructor(
    /** How many events the queue held when last read. */
    readonly depth: number,
    /** The inbox's bound. */
    readonly maxDepth: number,
  ) {
    super(
      `[service-webhooks] the inbox holds ${depth} events, more than its maxDepth ${maxDepth}; the event is not queued (the Service retries it): start or add workers, or raise maxDepth`,
    );
    this.name = 'InboxFull';
  }
}

/** How often the queue's depth is read, at most: a burst of enqueues shares one read. */
export const DEPTH_READ_MS = 1_000;

/** A `maxDepth` option checked: undefined when not given. */
export function checkMaxDepth(value: unknown, where: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      `maxDepth must be a whole number ≥ 1, the events the queue may hold (got ${String(value)}); leave it out for no bound`,
    );
  return value;
}

/**
 * Refuses an enqueue (`InboxFull`) while the queue holds more than `maxDepth` events, read with
 * `depth()` at most once a {@link DEPTH_READ_MS}, not per request: the bound may be passed by what
 * arrives within one read. A read that fails refuses nothing (the enqueue itself says whether the
 * engine is there).
 */
export function depthGate(maxDepth: number, depth: () => Promise<number>): () => Promise<void> {
  let known: { at: number; depth: number } | undefined;
  let reading: Promise<void> | undefined;
  return async () => {
    if (known === undefined || Date.now() - known.at >= DEPTH_READ_MS)
      await (reading ??= depth()
        .then(
          (n) => void (known = { at: Date.now(), depth: n }),
          () => void (known = undefined),
        )
        .finally(() => {
          reading = undefined;
        }));
    if (known !== undefined && known.depth > maxDepth) throw new InboxFull(known.depth, maxDepth);
  };
}
