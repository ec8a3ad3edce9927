function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/** A candidate the input begins or ends like (`retryAfter` → `retryAfterSeconds`, `bearerTokens` → `tokens`). */
function affix(input: string, candidates: Iterable<string>): string | undefined {
  const lower = input.toLowerCase();
  let best: string | undefined;
  for (const candidate of candidates) {
    const c = candidate.toLowerCase();
    const [short, long] = c.length < lower.length ? [c, lower] : [lower, c];
    if (short.length < 3 || !(long.startsWith(short) || long.endsWith(short))) continue;
    if (
      best === undefined ||
      Math.abs(candidate.length - input.length) < Math.abs(best.length - input.length)
    ) {
      best = candidate;
    }
  }
  return best;
}

/** The closest candidate to a misspelled name, or undefined when nothing is close. */
export function didYouMean(input: string, candidates: Iterable<string>): string | undefined {
  const list = [...candidates];
  let best: string | undefined = undefined;
  let bestDistance = Math.max(3, Math.floor(input.length / 3)) + 1;
  for (const candidate of list) {
    const d = distance(input, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best ?? affix(input, list);
}
