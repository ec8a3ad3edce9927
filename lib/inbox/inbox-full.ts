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
