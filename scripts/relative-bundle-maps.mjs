// The CommonJS conversion of split chunks (tsup.config.ts, nativeSyntaxCommonJs) is a second pass over
// esbuild's output, and that pass names the intermediate file by its absolute build path among each
// map's sources. Written relative here, so
// no map carries the build machine's paths; it names the shipped bundle itself.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const dist = path.resolve(process.argv[2] ?? 'dist');
const maps = readdirSync(dist, { recursive: true }).filter((file) => String(file).endsWith('.js.map'));
for (const file of maps) {
  const where = path.join(dist, String(file));
  const map = JSON.parse(readFileSync(where, 'utf8'));
  map.sources = map.sources.map((source) =>
    path.isAbsolute(source) ? path.relative(path.dirname(where), source).split(path.sep).join('/') : source,
  );
  if (typeof map.file === 'string' && path.isAbsolute(map.file)) map.file = path.basename(map.file);
  writeFileSync(where, JSON.stringify(map));
}
