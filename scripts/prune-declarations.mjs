// tsc writes a declaration file for every module, and each costs a 4 KiB block on disk however small:
// 309 files, 386 KB of text on 1.3 MB of disk. Only those the published entries' types reach are
// needed (the rest describe internals no entry's type names), so the others are removed: the install
// stays within its size budget (issue 19). Whatever a kept file imports is kept, so nothing a user's
// compiler reads goes missing (the package test type-checks every entry with skipLibCheck false).
import { existsSync, readFileSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import path from 'node:path';

const dist = path.resolve(process.argv[2] ?? 'dist');
const root = path.dirname(dist);
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

const starts = [];
const collect = (value) => {
  if (typeof value === 'string') {
    if (value.endsWith('.d.ts')) starts.push(path.resolve(root, value));
  } else if (value !== null && typeof value === 'object') Object.values(value).forEach(collect);
};
collect(pkg.exports);
collect(pkg.typesVersions);
collect(pkg.types);

// Every relative specifier a declaration file can hold: import/export … from, import('…'), import '…'.
const SPECIFIER = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;
const reached = new Set();
const pending = [...starts];
while (pending.length > 0) {
  const file = pending.pop();
  if (reached.has(file) || !existsSync(file)) continue;
  reached.add(file);
  for (const [, specifier] of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
    const target = path.resolve(path.dirname(file), specifier).replace(/\.(c|m)?js$/, '');
    for (const candidate of [`${target}.d.ts`, path.join(target, 'index.d.ts')])
      if (existsSync(candidate)) pending.push(candidate);
  }
}
if (starts.length === 0 || starts.some((file) => !reached.has(file)))
  throw new Error(
    `[service-webhooks] prune-declarations: an entry's declaration file is missing under ${dist}`,
  );

let removed = 0;
for (const name of readdirSync(dist, { recursive: true })) {
  const file = path.join(dist, String(name));
  if (file.endsWith('.d.ts') && !reached.has(file)) {
    rmSync(file);
    removed++;
  }
}
// A folder left empty (its modules' code is bundled elsewhere) goes too: the deepest first.
const folders = readdirSync(dist, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => path.join(entry.parentPath, entry.name))
  .sort((a, b) => b.length - a.length);
for (const folder of folders) if (readdirSync(folder).length === 0) rmdirSync(folder);
console.log(`declarations: ${reached.size} kept (reached from ${starts.length} entries), ${removed} removed`);
