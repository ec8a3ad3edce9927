// Pieces of runStoreContract's checks (store-contract.ts).

/** Keys a store must keep apart and hold faithfully: pairs that differ in one odd character. */
export const ODD_KEYS: readonly string[] = [
  '',
  'a\u0000b',
  'a\u0000c',
  'K',
  'k',
  'emoji 😀 é',
  'lone \uD800',
  'lone \uDC00',
  '{hash-tag}*?[]',
  'line\nbreak',
  '#sha256:0000',
  'x'.repeat(10_000),
  `${'x'.repeat(9_999)}y`,
];

/** How a store call ended within `ms`: resolved, rejected, threw synchronously, or still pending. */
export async function settledWithin(call: () => Promise<unknown>, ms: number): Promise<string> {
  let pending: Promise<unknown>;
  try {
    pending = call();
  } catch {
    return 'threw synchronously';
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still pending'), ms)));
  const settled = pending.then(
    () => 'resolved',
    (error: unknown) => (error instanceof Error ? 'rejected' : 'rejected with a non-Error'),
  );
  const result = await Promise.race([settled, late]);
  clearTimeout(timer);
  return result;
}
