import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { builtPackage, type BuiltPackage } from './support/built-package';

// What a fresh process loads for `require('service-webhooks')`, on the bundles as tsup.config.ts
// builds them: the cold start `npm run bench -- --cold-start` times (issue 36). Counts, not times.

let built: BuiltPackage;
let dist: string;

beforeAll(async () => {
  built = await builtPackage();
  dist = path.dirname(path.dirname(built.bin));
}, 300_000);

/** Runs `code` (CommonJS, may await) in a fresh node resolving the built package; its stdout as JSON. */
async function inFreshNode(code: string): Promise<unknown> {
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', `(async () => { ${code} })()`], {
    env: built.env,
    // Beside the built package's node_modules, not in this repository, where `service-webhooks` would
    // resolve to its own dist/ by self-reference.
    cwd: path.resolve(dist, '..', '..', '..'),
    timeout: 60_000,
  });
  return JSON.parse(stdout);
}

/** Declared in the child: the dependencies loaded so far, and the package's own files. */
const LOADED = `
  const loaded = () => {
    const files = Object.keys(require.cache);
    return {
      own: files.filter((f) => f.includes('/node_modules/service-webhooks/dist/')).map((f) => f.replace(/.*\\/dist\\//, '')),
      dependencies: ['bytes', 'content-type', 'secure-json-parse'].filter((name) => files.some((f) => f.includes('/node_modules/' + name + '/'))),
    };
  };`;

describe("the main entry's cold start", () => {
  it('loads its entry and at most four chunks of its own, and none of its dependencies', async () => {
    const { own, dependencies } = (await inFreshNode(
      `${LOADED} require('service-webhooks'); console.log(JSON.stringify(loaded()));`,
    )) as { own: string[]; dependencies: string[] };
    expect(own[0]).toBe('index.js');
    // More chunks: a new entry reaches part of the receiver and splits it. tsup.config.ts: let it share
    // the main entry's code (sharesMain), or, if it runs without a receiver, keep what it reaches small.
    expect(own.length).toBeLessThanOrEqual(5);
    expect(dependencies).toEqual([]);
  }, 60_000);

  it('wraps no module in a lazy initialiser in any bundle (what a bundled require() makes esbuild do)', () => {
    const bundles = readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((file) =>
      file.endsWith('.js'),
    );
    expect(bundles.length).toBeGreaterThan(15);
    const wrapped = bundles.filter((file) => /\b__esm\b/.test(readFileSync(path.join(dist, file), 'utf8')));
    expect(wrapped).toEqual([]);
  });

  it('loads each dependency on the first delivery or option that needs it, answering as before', async () => {
    const steps = await inFreshNode(`${LOADED}
      const { createEventRouter, createFetchHandler } = require('service-webhooks');
      const steps = [['imported', loaded().dependencies]];
      const seen = [];
      const router = createEventRouter().on('ag.access_pass.issued', (event) => void seen.push(event.data));
      createFetchHandler({ bearerTokens: ['tok'], router, logger: false, limit: 4096 });
      steps.push(['a number limit', loaded().dependencies]);
      const handler = createFetchHandler({ bearerTokens: ['tok'], router, logger: false, limit: '1mb' });
      steps.push(['a string limit', loaded().dependencies]);
      const { buildEvent } = require('service-webhooks/testing');
      const deliver = async (contentType, body) => (await handler(new Request('http://app.local/', {
        method: 'POST',
        headers: { authorization: 'Bearer tok', 'content-type': contentType },
        body,
      }))).status;
      const event = (id) => JSON.stringify(buildEvent('ag.access_pass.issued', {}, { id }));
      steps.push(['an ordinary delivery', await deliver('application/cloudevents+json', event('evt_1')), loaded().dependencies]);
      steps.push(['a Content-Type to parse', await deliver('application/cloudevents+json; charset="UTF-8"', event('evt_2')), loaded().dependencies]);
      const polluting = event('evt_3').replace('"data":{', '"data":{"__proto__":{"polluted":true},');
      steps.push(['a __proto__ key', await deliver('application/cloudevents+json', polluting), loaded().dependencies]);
      steps.push(['handled', seen.length, seen.some((data) => data.polluted !== undefined), {}.polluted === undefined]);
      console.log(JSON.stringify(steps));`);
    expect(steps).toEqual([
      ['imported', []],
      ['a number limit', []],
      ['a string limit', ['bytes']],
      ['an ordinary delivery', 200, ['bytes']],
      ['a Content-Type to parse', 200, ['bytes', 'content-type']],
      ['a __proto__ key', 200, ['bytes', 'content-type', 'secure-json-parse']],
      ['handled', 3, false, true],
    ]);
  }, 60_000);
});
