import { readFileSync } from 'node:fs';
import path from 'node:path';
import { postgresSetupSql } from 'service-webhooks/postgres';

const ROOT = path.join(__dirname, '..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const start = README.indexOf('\n## Running more than one instance\n');
const section = README.slice(start, README.indexOf('\n## ', start + 1));
const blocks = (lang: string) =>
  [...section.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1] ?? '');

describe('README "Running more than one instance"', () => {
  it('sits right after "Delivery guarantees"', () => {
    const headings = [...README.matchAll(/^## (.*)$/gm)].map((m) => m[1]);
    expect(headings[headings.indexOf('Delivery guarantees') + 1]).toBe('Running more than one instance');
  });

  // Its TypeScript blocks are type-checked with every other README block, in readme.test.ts.
  it('shows the SQL that setup() runs', () => {
    expect(blocks('sql')).toEqual([`${postgresSetupSql()}\n`]);
  });
});
