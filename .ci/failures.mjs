// Prints, from jest logs, a short digest of every failed test: its title and the first lines of
// its message, squeezed, at most MAX_CHARS in all. CI prints it just before its summary line because a
// reader of a long CI log often sees only its end: a failure's reason must be there, not only in the
// middle of several thousand lines of passing output.
// Usage: node .ci/failures.mjs <jest log>...
import { readFileSync } from 'node:fs';

const MAX_CHARS = 1_600;
const LINES_PER_FAILURE = 14;
const LINE_CHARS = 300;

/** A jest failure header: "  ● title › title", but not the console blocks jest also marks with ●. */
const HEADER = /^\s{2}● (?!Console$)(.+)$/;
/** Where a failure's message ends: the code frame, the stack, or the next file's result. */
const MESSAGE_END = /^\s*(>?\s*\d+ \||at |PASS |FAIL |Test Suites:)/;

function failuresOf(text) {
  const failures = [];
  let current;
  // eslint-disable-next-line no-control-regex -- jest colours its output under CI=true
  for (const raw of text.replace(/\x1b\[[0-9;]*m/g, '').split('\n')) {
    const header = HEADER.exec(raw);
    if (header) {
      current = { title: header[1].trim(), lines: [] };
      failures.push(current);
      continue;
    }
    if (!current) continue;
    if (MESSAGE_END.test(raw)) {
      current = undefined;
      continue;
    }
    const line = raw.trim().replace(/\s+/g, ' ');
    if (line !== '' && current.lines.length < LINES_PER_FAILURE)
      current.lines.push(line.slice(0, LINE_CHARS));
  }
  return failures;
}

// jest prints each failure twice when it ran several files (under its file, then in its summary).
const seen = new Set();
const failures = process.argv.slice(2).flatMap((file) => {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return failuresOf(text).filter(({ title, lines }) => {
    const key = JSON.stringify([title, lines]);
    return !seen.has(key) && seen.add(key);
  });
});
if (failures.length > 0) {
  let out = `Failed (${failures.length}), first lines of each:`;
  for (const { title, lines } of failures) out += `\n✕ ${title}\n  ${lines.join('\n  ')}`;
  if (out.length > MAX_CHARS) out = `${out.slice(0, MAX_CHARS)}…`;
  console.log(out);
}
