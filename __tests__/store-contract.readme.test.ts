import { readFileSync } from 'node:fs';
import path from 'node:path';
import { postgresSetupSql } from 'service-webhooks/postgres';

const ROOT = path.join(__dirname, '..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const section = readFileSync(path.join(ROOT, 'docs', 'many-instances.md'), 'utf8');
const blocks = (lang: string) =>
  [...section.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1] ?? '');

describe('the guide "Running more than one instance" (docs/many-instances.md)', () => {
  it('comes right after "Delivery guarantees" in the README\'s guide list, whose promise it extends', () => {
    const guides = [...README.matchAll(/^- \[[^\]]+\]\(docs\/([^)]+)\)/gm)].map((m) => m[1]);
    expect(guides[guides.indexOf('delivery-guarantees.md') + 1]).toBe('many-instances.md');
    expect(section.split('\n')[0]).toBe('# Running more than one instance');
  });

  // Its TypeScript blocks are type-checked with every other block of the docs, in readme.test.ts.
  it('shows the SQL that setup() runs', () => {
    expect(blocks('sql')).toEqual([`${postgresSetupSql()}\n`]);
  });
});
