// The in-process pipeline as users run it: `pipelineMicros` (bench/stages.ts) on the bundles of dist/,
// which tsup builds, not on tsc's output of lib/ that the other benches load (issue 36: tsup's
// conversion of split chunks once turned every `?.` and `??` into a helper call there).
//   npm run build && npx tsc -p bench/tsconfig.json
//   node .bench-build/bench/dist-pipeline.js [dist directory, default dist] [events, default 200000]
// CPU µs per event, so compare two builds side by side, alternating, on the same machine: copy one
// dist/ aside inside this repository (where its dependencies resolve, say .bench-build/dist-old) and
// pass both directories. Instructions instead of time: run it under
// `valgrind --tool=callgrind node --single-threaded --predictable-gc-schedule` for two counts of
// events and divide the difference of the totals by the difference of the counts.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as Main from '../lib';
import type * as Core from '../lib/core/receiver-core';
import type * as Tracing from '../lib/observability/open-telemetry-tracing';
import { TOKEN } from './bench-events';
import { pipelineMicros } from './stages';

type Bundle = typeof Main & typeof Core & typeof Tracing;

/** The main entry and its receiver chunk (found by what it exports: chunk names are hashes). */
function load(dist: string): Bundle {
  // As an app loads the package: by CommonJS require(), of the built files.
  const requireBuilt = createRequire(__filename);
  const main = requireBuilt(path.join(dist, 'index.js')) as typeof Main;
  const chunk = readdirSync(dist).find(
    (file) =>
      /^chunk-.*\.js$/.test(file) &&
      readFileSync(path.join(dist, file), 'utf8').includes('exports.createReceiverCore ='),
  );
  if (chunk === undefined)
    throw new Error(`[service-webhooks] no chunk of ${dist} exports createReceiverCore: run npm run build`);
  return { ...main, ...(requireBuilt(path.join(dist, chunk)) as typeof Core & typeof Tracing) };
}

async function main(): Promise<void> {
  const dist = path.resolve(process.argv[2] ?? 'dist');
  const events = Number(process.argv[3] ?? 200_000);
  if (!(Number.isInteger(events) && events > 0 && events % 10_000 === 0))
    throw new Error(`[service-webhooks] events must be a positive multiple of 10000, not ${process.argv[3]}`);
  const bundle = load(dist);
  const core = bundle.createReceiverCore(
    {
      bearerTokens: [TOKEN],
      router: bundle.createEventRouter().on('ag.*', () => undefined),
      logger: false,
      idempotency: new bundle.MemoryStore({ logger: false }),
    },
    'bench',
    bundle.openTelemetryTracing,
  );
  const micros = await pipelineMicros(events, core);
  console.log(JSON.stringify({ dist, events, microsPerEvent: Number(micros.toFixed(2)) }));
}

void main();
