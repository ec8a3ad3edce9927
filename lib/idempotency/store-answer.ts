/**
 * One rule for the shared stores: a script's or statement's answer is a small whole number, read as an
 * index into `results`; anything else (null, '', 7, a word) throws, so the caller answers 503 instead
 * of guessing. `Number(null)` is 0, which would read as the first result ('claimed', 'leased').
 */
export function storeAnswer<T>(store: string, what: string, value: unknown, results: readonly T[]): T {
  const index =
    typeof value === 'number' ||
    typeof value === 'bigint' ||
    (typeof value === 'string' && /^\d$/.test(value))
      ? Number(value)
      : -1;
  const result = results[index];
  if (result === undefined) throw unexpectedAnswer(store, what, value);
  return result;
}

/** The error of an answer a store cannot read: its prefix or table is likely shared with other data. */
export function unexpectedAnswer(store: string, what: string, value: unknown): Error {
  const where = store === 'RedisStore' ? 'prefix' : 'table';
  return new Error(
    `[service-webhooks] ${store}: ${what} got an unexpected answer (${String(value).slice(0, 20)}); is the ${where} shared with other data?`,
  );
}
