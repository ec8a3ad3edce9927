// The in-process rows of `npm run bench`, each in a fresh process of its own, as the stores' row is:
//   node --expose-gc .bench-build/bench/in-process-row.js pipeline|memory
// Run in the load generator's process instead, after minutes of autocannon, they measured that
// process's heap and compiled code as much as the pipeline.
import { memoryOverEvents, pipelineMicros } from './stages';

const ROWS = { pipeline: pipelineMicros, memory: memoryOverEvents } as const;

const row = ROWS[process.argv[2] as keyof typeof ROWS] as (() => Promise<unknown>) | undefined;
if (row === undefined) {
  process.stderr.write(`usage: in-process-row.js ${Object.keys(ROWS).join('|')}\n`);
  process.exit(2);
}
void row().then((value) => process.stdout.write(`${JSON.stringify(value)}\n`));
