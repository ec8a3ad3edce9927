import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { anchors, brokenLinks, slug } from './support/doc-links';
import { docFiles } from './support/readme-blocks';

const ROOT = path.join(__dirname, '..');

describe('the relative links of the README and docs/*.md', () => {
  it.each(docFiles())('%s: every one reaches its file and heading', (doc) => {
    expect(brokenLinks(ROOT, doc, readFileSync(path.join(ROOT, doc), 'utf8'))).toEqual([]);
  });
});

describe('the link check itself', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(path.join(tmpdir(), 'doc-links-'));
    mkdirSync(path.join(root, 'docs'));
    writeFileSync(path.join(root, 'docs', 'guide.md'), '# A guide\n\n## `run(options)`: the steps\n');
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('makes the anchors GitHub makes, repeated headings numbered, headings in code ignored', () => {
    expect(slug('Redis or Valkey: `service-webhooks/redis`')).toBe('redis-or-valkey-service-webhooksredis');
    expect(slug('`ag.webhook.cert_expiring`')).toBe('agwebhookcert_expiring');
    expect([...anchors('# A\n## A\n```sh\n# not a heading\n```\n')]).toEqual(['a', 'a-1']);
  });

  it.each([
    ['a missing file', '[x](docs/nope.md)', /no file docs\/nope\.md/],
    ['a missing heading', '[x](docs/guide.md#the-steps)', /no heading #the-steps in docs\/guide\.md/],
    ['a missing heading of its own', '[x](#nowhere)', /no heading #nowhere in README\.md/],
  ])('reports %s', (_what, link, reason) => {
    const found = brokenLinks(root, 'README.md', `# Top\n\nSee ${link}.\n`);
    expect(found).toEqual([expect.stringMatching(reason)]);
    expect(found[0]).toMatch(/^README\.md:3: /);
  });

  it('accepts links that resolve, and leaves URLs and code alone', () => {
    const text = [
      '# Top',
      '[guide](docs/guide.md) [steps](docs/guide.md#runoptions-the-steps) [top](#top)',
      '[web](https://example.com/nope.md#x)',
      '```md',
      '[in code](docs/nope.md)',
      '```',
    ].join('\n');
    expect(brokenLinks(root, 'README.md', text)).toEqual([]);
    expect(brokenLinks(root, 'docs/guide.md', '[back](../docs/guide.md#a-guide)')).toEqual([]);
  });
});
