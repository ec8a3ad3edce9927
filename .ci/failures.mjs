// Prints, from CI's logs, a short digest of what failed: each failed jest test (its file and title),
// each failed check of npm test (type check, lint), then the first lines of each one's message, in at
// most MAX_BYTES. CI prints it just before its summary line because a reader of a long CI log often
// sees only its end: a failure's reason must be there, not only in the middle of thousands of lines.
// Usage: node .ci/failures.mjs <label>=<log>...
import { readFileSync } from 'node:fs';

const MAX_BYTES = 1_600;
const LINES_PER_FAILURE = 14;
const LINE_CHARS = 300;

/** jest's result line of a file: "FAIL <project> <path> (12 s)", the project's name optional. */
const FILE = /^FAIL (?:\S+ )?(\S+\.[cm]?[jt]sx?)\b/;
/** A jest failure's header: "  ● title › title", but not the console blocks jest also marks with ●. */
const HEADER = /^ {2}● (?!Console$)(.+)$/;
/** scripts/npm-test.mjs's line for a check that failed; its output follows. */
const CHECK = /^(type check|lint): failed/;
/**
 * Where a message ends: a jest message's code frame or stack (its own lines are indented by four
 * spaces), a check's at the next check's line.
 */
const MESSAGE_END = /^\s*>?\s*\d+ \||^\s{6,}at |^(type check|lint): /;

function failuresOf(label, text) {
  const failures = [];
  let file = '';
  let current;
  // eslint-disable-next-line no-control-regex -- jest colours its output under CI=true
  for (const raw of text.replace(/\x1b\[[0-9;]*m/g, '').split(/\r?\n/)) {
    const header = HEADER.exec(raw);
    const check = CHECK.exec(raw);
    if (header || check) {
      const title = header ? `${file ? `${file}: ` : ''}${header[1].trim()}` : raw.trim();
      current = { label, title, lines: [], indent: header ? 4 : 0 };
      failures.push(current);
      continue;
    }
    const result = FILE.exec(raw);
    if (result) file = result[1];
    if (!current) continue;
    if (raw.trim() === '') continue;
    const indent = raw.length - raw.trimStart().length;
    if (indent < current.indent || MESSAGE_END.test(raw) || result) {
      current = undefined;
      continue;
    }
    if (current.lines.length < LINES_PER_FAILURE)
      current.lines.push(raw.trim().replace(/\s+/g, ' ').slice(0, LINE_CHARS));
  }
  return failures;
}

// jest prints each failure twice when it ran several files (under its file, then in its summary).
const seen = new Set();
const failures = process.argv.slice(2).flatMap((arg) => {
  const at = arg.indexOf('=');
  const [label, file] = at > 0 ? [arg.slice(0, at), arg.slice(at + 1)] : ['', arg];
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return failuresOf(label, text).filter(({ title, lines }) => {
    const key = JSON.stringify([label, title, lines]);
    return !seen.has(key) && seen.add(key);
  });
});

if (failures.length > 0) {
  // Every title first, so a long message cannot push a later failure out of the budget.
  const titles = failures.map(({ label, title }, i) => `✕ ${i + 1}. ${label ? `[${label}] ` : ''}${title}`);
  let out = `Failed (${failures.length}):\n${titles.join('\n')}`;
  failures.forEach(({ lines }, i) => {
    if (lines.length > 0) out += `\n${i + 1}:\n  ${lines.join('\n  ')}`;
  });
  const bytes = Buffer.from(out);
  console.log(
    bytes.length <= MAX_BYTES
      ? out
      : `${bytes
          .subarray(0, MAX_BYTES)
          .toString()
          .replace(/\uFFFD$/, '')}…`,
  );
}
