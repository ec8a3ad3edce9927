/**
 * How long a dead letter can wait for its replay, at the most any engine keeps one on its own:
 * pg-boss's `<name>.dead` queue is made with this retention (BullMQ keeps failed jobs until removed).
 * A worker keeps its entities' newest marks at least this long, so a replay is still judged by them.
 */
export const DEAD_LETTER_RETENTION_MS = 90 * 24 * 60 * 60 * 1000;

/** {@link DEAD_LETTER_RETENTION_MS} in seconds, as pg-boss takes it: it deletes a queued job older than its retention. */
export const DEAD_LETTER_RETENTION_SECONDS = DEAD_LETTER_RETENTION_MS / 1000;
