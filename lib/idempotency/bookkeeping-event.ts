/**
 * What the idempotency store's bookkeeping did after an answer, as a receiver's
 * `onDelivery.onBookkeeping` and a worker's `onJob.onBookkeeping` are told of it.
 */
export type BookkeepingEvent = 'mark-done-recovered' | 'mark-done-failed' | 'lease-lost' | 'future-time';
