import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The markdown outside fenced code blocks, lines kept in place (blanked) so line numbers hold. */
function prose(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').map((line) => {
    if (line.startsWith('```')) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line;
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor GitHub gives a markdown file's headings, a repeated one suffixed -1, -2, … */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const line of prose(markdown)) {
    const heading = /^#{1,6} (.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/**
 * The relative links of one markdown file (`doc`, relative to `root`) that do not reach an existing
 * file, or a heading of it: `docs/x.md:12: [text](target): why`. Absolute URLs are not followed.
 */
export function brokenLinks(root: string, doc: string, markdown: string): string[] {
  const broken: string[] = [];
  prose(markdown).forEach((line, index) => {
    for (const match of line.matchAll(/\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[2] as string;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [file = '', anchor] = target.split('#', 2);
      const where = `${doc}:${index + 1}: ${match[0]}`;
      if (file === '') {
        if (anchor !== undefined && !anchors(markdown).has(anchor)) {
          broken.push(`${where}: no heading #${anchor} in ${doc}`);
        }
        continue;
      }
      const resolved = path.join(root, path.dirname(doc), file);
      if (!existsSync(resolved)) {
        broken.push(`${where}: no file ${path.relative(root, resolved)}`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!resolved.endsWith('.md')) {
        broken.push(`${where}: an anchor into a file that is not markdown`);
      } else if (!anchors(readFileSync(resolved, 'utf8')).has(anchor)) {
        broken.push(`${where}: no heading #${anchor} in ${path.relative(root, resolved)}`);
      }
    }
  });
  return broken;
}
