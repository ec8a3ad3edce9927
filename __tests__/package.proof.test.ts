import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseBlocks } from './support/readme-blocks';
import { startRedisServer } from './support/redis-server';
import { RESOLUTION_MODES, typeErrors, writeEntriesApp, type ResolutionMode } from './support/type-check-app';
import { buildEvent } from '../lib/testing';

const ROOT = path.resolve(__dirname, '..');
const FIXTURES = path.join(__dirname, 'fixtures', 'packed-apps');
const run = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_loglevel: 'error' },
  });

/**
 * Runs `use` in a fresh node twice, once after `require` and once after `import` of `names` (subpath →
 * the names it exports), and returns both outputs: every subpath is proved both ways the same.
 */
/** Every subpath package.json exports, as its folder under dist/ (`''` for the main entry). */
const ENTRIES = Object.keys(
  (JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { exports: object })
    .exports,
)
  .filter((subpath) => subpath !== './package.json')
  .map((subpath) => (subpath === '.' ? '' : `${subpath.slice(2)}/`));

/** The subpaths of ENTRIES as an app imports them: '' for the main entry, 'testing', ... */
const SUBPATHS = ENTRIES.map((entry) => entry.replace(/\/$/, ''));

/** Entries whose optional peer ships its own types: an app using one installs that peer, nothing else. */
const PEER_TYPED: Record<string, string | string[]> = {
  metrics: 'prom-client@15',
  bullmq: 'bullmq@6',
  'pg-boss': 'pg-boss@12',
  fastify: 'fastify@5',
  nestjs: ['@nestjs/common@12', '@nestjs/core@12', 'reflect-metadata@0.2', 'rxjs@7'],
};
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

function requiredAndImported(dir: string, names: Record<string, string[]>, use: string): [string, string] {
  const each = Object.entries(names);
  const requires = each.map(([from, list]) => `const { ${list.join(', ')} } = require('${from}');`);
  const imports = each.map(([from, list]) => `import { ${list.join(', ')} } from '${from}';`);
  return [
    run('node', ['-e', `${requires.join(' ')} ${use}`], dir),
    run('node', ['--input-type=module', '-e', `${imports.join(' ')} ${use}`], dir),
  ];
}

/** The published shape, not lib/: pack the package and install the tarball into throwaway apps. */
describe('the packed tarball', () => {
  let work: string;
  let tarball: string;

  beforeAll(() => {
    work = mkdtempSync(path.join(tmpdir(), 'service-webhooks-pack-'));
    run('npm', ['pack', '--pack-destination', work], ROOT);
    const name = readdirSync(work).find((file) => file.endsWith('.tgz'));
    if (!name) throw new Error('npm pack wrote no tarball');
    tarball = path.join(work, name);
  }, 180_000);

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  function app(name: string, packageJson: object, deps: string[]): string {
    const dir = path.join(work, name);
    run('mkdir', ['-p', dir], work);
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true, ...packageJson }));
    run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, ...deps], dir);
    return dir;
  }

  it('ships only dist, the README, LICENSE, CHANGELOG and package.json', () => {
    const files = run('tar', ['-tzf', tarball], work).trim().split('\n');
    const shipped = /^package\/(dist\/|README\.md$|LICENSE$|CHANGELOG\.md$|package\.json$)/;
    expect(files.filter((file) => !shipped.test(file))).toEqual([]);
    for (const file of ['README.md', 'LICENSE', 'CHANGELOG.md']) expect(files).toContain(`package/${file}`);
    expect(files).toContain('package/dist/index.d.ts');
    for (const entry of ENTRIES) expect(files).toContain(`package/dist/${entry}index.d.ts`);
  });

  it('ships one bundle per entry (shared code in chunks), each with a map carrying its TypeScript sources', () => {
    const files = new Set(run('tar', ['-tzf', tarball], work).trim().split('\n'));
    const unpacked = path.join(work, 'unpacked');
    mkdirSync(unpacked, { recursive: true });
    run('tar', ['-xzf', tarball, '-C', unpacked], work);
    const compiled = [...files].filter((file) => /^package\/dist\/.*\.js$/.test(file));
    for (const entry of [...ENTRIES, 'cli/']) expect(compiled).toContain(`package/dist/${entry}index.js`);
    // Bundled: a few files per entry (the entry and the chunks it shares), not one per source module.
    expect(compiled.length).toBeLessThan(4 * (ENTRIES.length + 1));
    const missing: string[] = [];
    const covered = new Set<string>();
    for (const file of compiled) {
      const map = `${file}.map`;
      if (!files.has(map)) {
        missing.push(map);
        continue;
      }
      const { sources, sourcesContent } = JSON.parse(readFileSync(path.join(unpacked, map), 'utf8')) as {
        sources: string[];
        sourcesContent?: (string | null)[];
      };
      sources.forEach((source, i) => {
        const shipped = path.posix.join(path.posix.dirname(map), source);
        covered.add(shipped);
        // A TypeScript source travels inside the map; the bundler's own pass names the bundle itself.
        const carried = typeof sourcesContent?.[i] === 'string' && sourcesContent[i] !== '';
        if (!carried && !files.has(shipped)) missing.push(`${map} → ${source}`);
      });
    }
    expect(missing).toEqual([]);
    // Every module of the library is in some map, so every stack frame can be mapped back.
    expect([...covered].filter((source) => source.startsWith('package/lib/')).length).toBeGreaterThan(100);
    // And node uses them: a stack trace names the TypeScript file and line, not dist/.
    const stack = execFileSync(
      'node',
      [
        '--enable-source-maps',
        '-e',
        "try { require('./package/dist/index.js').webhookReceiver({ bearerTokens: ['t'], router: {} }) } catch (e) { console.log(e.stack) }",
      ],
      // The package's own dependencies, from this repository.
      {
        cwd: unpacked,
        encoding: 'utf8',
        env: { ...process.env, NODE_PATH: path.join(ROOT, 'node_modules') },
      },
    );
    expect(stack).toMatch(
      /OptionsError: \[service-webhooks\] webhookReceiver: router must come from createEventRouter/,
    );
    expect(stack).toMatch(/package\/lib\/core\/resolve-receiver-options\.ts:\d+:\d+/);
  }, 60_000);

  it('loads neither the cloudevents SDK, supertest, express, the queue engines nor (until an SDK registers) OpenTelemetry from the main entry, the test kit, the emulator or the CLI', () => {
    const unpacked = path.join(work, 'unpacked-require');
    mkdirSync(unpacked, { recursive: true });
    run('tar', ['-xzf', tarball, '-C', unpacked], work);
    const probe = (entry: string) =>
      JSON.parse(
        execFileSync(
          'node',
          [
            '-e',
            `require('./package/dist/${entry}'); console.log(JSON.stringify([...new Set(Object.keys(require.cache).map((f) => /node_modules\\/((@[^/]+\\/)?[^/]+)/.exec(f)?.[1]).filter(Boolean))].sort()))`,
          ],
          {
            cwd: unpacked,
            encoding: 'utf8',
            env: { ...process.env, NODE_PATH: path.join(ROOT, 'node_modules') },
          },
        ),
      ) as string[];
    for (const entry of ['index.js', 'testing/index.js', 'emulator/index.js', 'cli/index.js']) {
      const loaded = probe(entry);
      expect({
        entry,
        loaded: loaded.filter((name) =>
          ['cloudevents', 'supertest', 'express', '@opentelemetry/api', 'bullmq', 'pg-boss'].includes(name),
        ),
      }).toEqual({ entry, loaded: [] });
    }
    // The probe sees a load when there is one: the CLI does load commander.
    expect(probe('cli/index.js')).toContain('commander');
  }, 60_000);

  it('works from require() in a CommonJS app, test kit included, without supertest installed', () => {
    const dir = app('cjs-app', { type: 'commonjs' }, ['express@5']);
    copyFileSync(path.join(FIXTURES, 'cjs-app.js'), path.join(dir, 'index.js'));
    const out = JSON.parse(run('node', ['index.js'], dir));
    expect(out).toEqual({
      handshake: [200, { challenge: 'chl_cjs' }],
      delivery: 200,
      handled: ['evt_cjs'],
      supertestLoaded: false,
    });
  }, 180_000);

  it('serves createNodeHandler and createFetchHandler in an app without Express', () => {
    const dir = app('doors-app', { type: 'module' }, []);
    copyFileSync(path.join(FIXTURES, 'doors-app.mjs'), path.join(dir, 'index.mjs'));
    const out = JSON.parse(run('node', ['index.mjs'], dir));
    expect(out).toEqual({
      node: [200, 'processed'],
      elsewhere: 404,
      fetch: [200, 'processed'],
      handled: ['evt_node', 'evt_fetch'],
      drained: true,
      expressLoaded: false,
    });
  }, 180_000);

  it('bundles into an app with esbuild: what the receiver loads on first use travels in the bundle, which answers its rare paths with no node_modules', () => {
    const dir = app('bundled-app', { type: 'commonjs' }, []);
    const event = buildEvent('ag.access_pass.issued', {}, { id: 'bundled-1' });
    const bad = buildEvent('ag.access_pass.issued', {}, { id: 'bundled-2' });
    (bad.data as { start_date: unknown }).start_date = 'not a date';
    const proto = JSON.stringify(buildEvent('ag.access_pass.issued', {}, { id: 'bundled-3' })).replace(
      '"data":{',
      '"data":{"__proto__":{"polluted":true},',
    );
    // Each delivery takes a path whose dependency is loaded on first use: none (the common path), zod
    // (explaining bad data), secure-json-parse (a __proto__ key), content-type (an unusual spelling),
    // bytes (a limit given as a string).
    const deliveries = [
      [JSON.stringify(event), 'application/cloudevents+json'],
      [JSON.stringify(bad), 'application/cloudevents+json'],
      [proto, 'application/cloudevents+json'],
      [JSON.stringify({ ...event, id: 'bundled-4' }), 'Application/CloudEvents+JSON ; charset="UTF-8"'],
    ];
    writeFileSync(
      path.join(dir, 'server.js'),
      `const http = require('node:http');
      const { createNodeHandler, createEventRouter } = require('service-webhooks');
      const handled = [];
      const router = createEventRouter().on('ag.*', (event) => { handled.push(event.id); });
      const server = http.createServer(createNodeHandler({ bearerTokens: ['tok_bundled'], router, limit: '64kb', logger: false }));
      server.listen(0, '127.0.0.1', async () => {
        const url = 'http://127.0.0.1:' + server.address().port + '/';
        const answers = [];
        for (const [body, type] of ${JSON.stringify(deliveries)}) {
          const response = await fetch(url, { method: 'POST', body, headers: { authorization: 'Bearer tok_bundled', 'content-type': type } });
          const problem = response.status === 200 ? '' : (await response.json()).detail;
          answers.push([response.status, problem.includes('start_date')]);
        }
        server.close();
        console.log(JSON.stringify({ answers, handled, polluted: {}.polluted === true }));
      });`,
    );
    const expected = {
      answers: [
        [200, false],
        [400, true],
        [200, false],
        [200, false],
      ],
      handled: ['bundled-1', 'bundled-3', 'bundled-4'],
      polluted: false,
    };
    expect(JSON.parse(run('node', ['server.js'], dir))).toEqual(expected);
    const esbuild = path.join(ROOT, 'node_modules', '.bin', 'esbuild');
    const alone = path.join(work, 'bundled-alone');
    mkdirSync(alone, { recursive: true });
    run(
      esbuild,
      ['server.js', '--bundle', '--platform=node', `--outfile=${path.join(alone, 'server.js')}`],
      dir,
    );
    // Nothing to resolve beside the bundle: a require() the bundler did not follow fails here.
    expect(readdirSync(alone)).toEqual(['server.js']);
    expect(JSON.parse(run('node', ['server.js'], alone))).toEqual(expected);
  }, 180_000);

  it('works with Express 4, the older end of the peer range', () => {
    const dir = app('cjs-express4-app', { type: 'commonjs' }, ['express@4']);
    copyFileSync(path.join(FIXTURES, 'cjs-app.js'), path.join(dir, 'index.js'));
    expect(run('node', ['-p', "require('express/package.json').version"], dir)).toMatch(/^4\./);
    const out = JSON.parse(run('node', ['index.js'], dir));
    expect(out).toMatchObject({
      handshake: [200, { challenge: 'chl_cjs' }],
      delivery: 200,
      handled: ['evt_cjs'],
    });
  }, 180_000);

  it('type-checks its middleware in an Express 4 app, with Express 4 types and skipLibCheck false', () => {
    const dir = app('ts-express4-app', { type: 'commonjs' }, [
      'express@4',
      '@types/express@4',
      '@types/node@22',
    ]);
    writeFileSync(
      path.join(dir, 'index.ts'),
      `import express = require('express');
import { bearerAuth, challengeHandshake, createEventRouter, dispatchEvent, problemHandler, readCloudEvent, webhookReceiver } from 'service-webhooks';
const router = createEventRouter().on('ag.access_pass.issued', (event) => void event.data.id);
const app = express();
app.use('/webhooks', webhookReceiver({ bearerTokens: ['t'], router }));
app.post('/steps', challengeHandshake(), bearerAuth({ tokens: ['t'] }), readCloudEvent(), dispatchEvent(router));
app.use(problemHandler());
export = app;
`,
    );
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'commonjs',
          // As `tsc --init` writes it: zod's own declarations need it under skipLibCheck false.
          esModuleInterop: true,
          target: 'es2022',
          strict: true,
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
        },
        files: ['index.ts'],
      }),
    );
    run('node', [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], dir);
  }, 180_000);

  it('loads service-webhooks/metrics by require and by import, with prom-client as its peer', () => {
    const dir = app('metrics-app', { type: 'commonjs' }, ['prom-client@15']);
    const record =
      "{ eventId: 'e', type: 'ag.access_pass.issued', source: 's', layout: 'A', outcome: 'processed', status: 200, problem: null, durationMs: 2, handlerMs: 1, attempt: 1 }";
    const use = `const registry = new Registry(); const metrics = prometheusMetrics({ registry });
      metrics.onRequestStart(); metrics(${record}); registry.metrics().then((text) => console.log(text));`;
    for (const text of requiredAndImported(
      dir,
      { 'service-webhooks/metrics': ['prometheusMetrics'], 'prom-client': ['Registry'] },
      use,
    )) {
      expect(text).toContain(
        'service_webhooks_requests_total{type="ag.access_pass.issued",outcome="processed"} 1',
      );
      expect(text).toContain('service_webhooks_requests_in_flight 0');
    }
  }, 180_000);

  it('loads service-webhooks/redis and /postgres by require and by import, with no Redis or PostgreSQL client', () => {
    const dir = app('stores-app', { type: 'commonjs' }, []);
    const use = `const sent = [];
      const redis = new RedisStore({ sendCommand: async (...a) => (sent.push(a[0]), a[0] === 'EVALSHA' ? 0 : 'sha') });
      const postgres = new PostgresStore({ pool: { query: async () => ({ rows: [{ result: 2 }] }) } });
      // One class whichever subpath threw it: the main entry's instanceof holds for each.
      const caught = (make) => { try { make(); return 'no error'; } catch (e) { return e instanceof OptionsError; } };
      const same = [caught(() => new RedisStore({ bogus: 1 })), caught(() => new PostgresStore({ bogus: 1 }))];
      Promise.all([redis.claim('k', 't', 1000), postgres.claim('k', 't', 1000)]).then((claims) =>
        console.log(JSON.stringify({ claims, sent, sql: postgresSetupSql().startsWith('CREATE TABLE'), contract: typeof runStoreContract, same })));`;
    for (const text of requiredAndImported(
      dir,
      {
        'service-webhooks': ['OptionsError'],
        'service-webhooks/redis': ['RedisStore'],
        'service-webhooks/postgres': ['PostgresStore', 'postgresSetupSql'],
        'service-webhooks/testing': ['runStoreContract'],
      },
      use,
    )) {
      expect(JSON.parse(text)).toEqual({
        claims: ['claimed', 'done'],
        sent: ['SCRIPT', 'SCRIPT', 'SCRIPT', 'CONFIG', 'EVALSHA'],
        sql: true,
        contract: 'function',
        same: [true, true],
      });
    }
  }, 180_000);

  it('loads service-webhooks/bullmq and /pg-boss by require and by import, the engines only when used', () => {
    const dir = app('inbox-app', { type: 'commonjs' }, ['bullmq@6', 'pg-boss@12']);
    // The option check needs no engine; a Queue check loads bullmq; a first call loads pg-boss (an ES
    // module, by require on Node >= 22.12) and meets the closed port.
    const use = `const seen = [];
      try { bullmqInbox({}); } catch (e) { seen.push(e.name, e instanceof OptionsError); }
      try { pgBossInbox({ bogus: 1 }); } catch (e) { seen.push(e instanceof OptionsError); }
      try { bullmqInbox({ queue: {} }); } catch (e) { seen.push(e.message.includes("queue must be a Queue from 'bullmq'")); }
      const inbox = pgBossInbox({ connectionString: 'postgres://postgres@127.0.0.1:1/none' });
      inbox.status().catch((e) => seen.push(e.code ?? e.message)).then(() => console.log(JSON.stringify(seen)));`;
    for (const text of requiredAndImported(
      dir,
      {
        'service-webhooks': ['OptionsError'],
        'service-webhooks/bullmq': ['bullmqInbox'],
        'service-webhooks/pg-boss': ['pgBossInbox'],
      },
      use,
    ))
      expect(JSON.parse(text)).toEqual(['OptionsError', true, true, true, 'ECONNREFUSED']);
    // Without the optional peers: the subpaths load, and say what to install once an engine is needed.
    const bare = app('inbox-bare-app', { type: 'commonjs' }, []);
    const missing = run(
      'node',
      [
        '-e',
        `const { bullmqInbox } = require('service-webhooks/bullmq'); try { bullmqInbox({ queue: {} }); } catch (e) { console.log(e.message); }`,
      ],
      bare,
    );
    expect(missing).toMatch(
      /\[service-webhooks\] bullmqInbox: could not load 'bullmq'; install it .*\(npm install bullmq@6 ioredis\)/,
    );
  }, 180_000);

  it('loads service-webhooks/fastify by require and by import: a Fastify 5 app answers a delivery through it, and without Fastify the subpath still loads', () => {
    const dir = app('fastify-app', { type: 'commonjs' }, ['fastify@5']);
    const use = `const app = fastify();
      app.register(serviceWebhooks, { bearerTokens: ['tok'], router: createEventRouter(), logger: false });
      const payload = JSON.stringify(buildEvent('ag.access_pass.issued', {}, { id: 'evt_packed' }));
      const send = (authorization) => app.inject({ method: 'POST', url: '/webhooks', payload,
        headers: { ...DELIVERY_HEADERS, authorization } });
      Promise.all([send('Bearer tok'), send('Bearer wrong')])
        .then(async ([ok, refused]) => { await app.close(); console.log(JSON.stringify([ok.statusCode, ok.json().status, refused.statusCode])); });`;
    for (const text of requiredAndImported(
      dir,
      {
        'service-webhooks/fastify': ['serviceWebhooks'],
        'service-webhooks': ['createEventRouter'],
        'service-webhooks/testing': ['buildEvent', 'DELIVERY_HEADERS'],
        fastify: ['fastify'],
      },
      use.replace(/\n\s*/g, ' '),
    ))
      expect(JSON.parse(text)).toEqual([200, 'unhandled', 401]);
    // The plugin needs nothing of Fastify's at run time: an app without it loads the subpath.
    const bare = app('fastify-bare-app', { type: 'commonjs' }, []);
    expect(
      run(
        'node',
        ['-e', "console.log(typeof require('service-webhooks/fastify').serviceWebhooks)"],
        bare,
      ).trim(),
    ).toBe('function');
  }, 180_000);

  it('connects service-webhooks/bullmq to Redis by a redis:// URL after the documented npm install bullmq@6 ioredis, and names ioredis without it', async () => {
    const redis = await startRedisServer();
    try {
      // Made, a worker started and the queue read, by the URL: what `npm install bullmq` alone broke.
      const use = `const { createEventRouter } = require('service-webhooks');
        const { bullmqInbox } = require('service-webhooks/bullmq');
        (async () => {
          let inbox;
          try { inbox = bullmqInbox({ connection: '${redis.url}', name: 'packed', logger: false }); }
          catch (e) { return console.log(JSON.stringify({ error: e.message })); }
          const worker = await inbox.startWorker(createEventRouter(), { logger: false });
          const status = await inbox.status();
          await worker.close();
          await inbox.close();
          console.log(JSON.stringify({ status }));
        })();`;
      const documented = app('bullmq-ioredis-app', { type: 'commonjs' }, ['bullmq@6', 'ioredis']);
      expect(JSON.parse(run('node', ['-e', use], documented))).toEqual({
        status: {
          waiting: 0,
          delayed: 0,
          active: 0,
          dead: 0,
          oldestAgeMs: null,
          oldestDelayedAgeMs: null,
          paused: false,
        },
      });
      const bare = app('bullmq-only-app', { type: 'commonjs' }, ['bullmq@6']);
      expect(JSON.parse(run('node', ['-e', use], bare))).toEqual({
        error: expect.stringMatching(
          /^\[service-webhooks\] bullmqInbox: .*need 'ioredis'.*: npm install ioredis$/,
        ),
      });
    } finally {
      await redis.close();
    }
  }, 240_000);

  it('works from import in an ESM TypeScript app, types included', () => {
    const dir = app('esm-app', { type: 'module' }, [
      'express@5',
      '@types/express@5',
      '@types/node@20',
      'supertest@7',
      '@types/supertest',
    ]);
    copyFileSync(path.join(FIXTURES, 'esm-app.mts'), path.join(dir, 'index.mts'));
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          target: 'es2022',
          strict: true,
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          outDir: 'out',
          skipLibCheck: false,
          types: ['node'],
        },
        files: ['index.mts'],
      }),
    );
    run('node', [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], dir);
    const out = JSON.parse(run('node', ['out/index.mjs'], dir));
    expect(out).toEqual({
      listed: 0,
      handshake: [200, { challenge: 'chl_esm' }],
      delivery: 200,
      sent: [200, 'processed'],
      handled: ['100234', '100234'],
    });
  }, 180_000);

  it('installs like its peers: at most 10 packages and 14 MB, publint and attw clean in every resolution mode', () => {
    const dir = app('budget-app', {}, []);
    const packages = run('npm', ['ls', '--all', '--parseable'], dir).trim().split('\n').slice(1);
    const bytes = Number(run('du', ['-s', '--block-size=1', 'node_modules'], dir).split('\t')[0]);
    const probe = run(
      'node',
      [
        '-e',
        "const t = process.hrtime.bigint(); const m = require('service-webhooks'); const ms = Number(process.hrtime.bigint() - t) / 1e6; console.log(JSON.stringify({ modules: Object.keys(require.cache).length, ms, names: [m.OptionsError.name, m.HttpProblem.name, m.MemoryStore.name, m.webhookReceiver.name] }))",
      ],
      dir,
    );
    const { modules, ms, names } = JSON.parse(probe) as { modules: number; ms: number; names: string[] };
    // Bundled, the classes and factories still say what they are (in stack traces and errors).
    expect(names).toEqual(['OptionsError', 'HttpProblem', 'MemoryStore', 'webhookReceiver']);
    // The mTLS code loads only for a receiver given `mtls`: a bearer-token one never parses it.
    const mtls = run(
      'node',
      [
        '-e',
        "const m = require('service-webhooks'); const loaded = () => Object.keys(require.cache).some((f) => f.includes('/dist/mtls/')); m.createNodeHandler({ bearerTokens: ['t'], router: m.createEventRouter() }); const bearer = loaded(); let error; try { m.createNodeHandler({ mtls: { from: 'bogus' }, router: m.createEventRouter() }) } catch (e) { error = e instanceof m.OptionsError } console.log(JSON.stringify({ bearer, mtls: loaded(), error }))",
      ],
      dir,
    );
    expect(JSON.parse(mtls)).toEqual({ bearer: false, mtls: true, error: true });
    console.log(
      `install budget: ${packages.length} packages, ${(bytes / 2 ** 20).toFixed(1)} MiB on disk (du); require('service-webhooks'): ${modules} modules, ${ms.toFixed(0)} ms`,
    );
    expect(packages.length).toBeLessThanOrEqual(10);
    // `du -sh` (how the issue measured every peer) prints mebibytes: "14M" is at most 14 MiB.
    expect(bytes).toBeLessThanOrEqual(14 * 1024 * 1024);
    // The cold-start budget (issue 19): one bundle per entry, zod and OpenTelemetry loaded on first use.
    expect(modules).toBeLessThanOrEqual(60);
    const unpacked = path.join(work, 'unpacked-lint');
    mkdirSync(unpacked, { recursive: true });
    run('tar', ['-xzf', tarball, '-C', unpacked], work);
    expect(run('npx', ['--no-install', 'publint', path.join(unpacked, 'package')], ROOT)).toMatch(/All good/);
    let report: string;
    try {
      report = run('npx', ['--no-install', 'attw', tarball, '--format', 'json'], ROOT);
    } catch (error) {
      report = String((error as { stdout?: string }).stdout ?? error);
    }
    const { analysis } = JSON.parse(report) as { analysis: { problems: unknown[] } };
    expect(analysis.problems).toEqual([]);
  }, 180_000);

  it('type-checks in a TypeScript app without Express, supertest or any optional peer and without skipLibCheck, every entry that needs no peer in every resolution mode, under TypeScript 5.9 and 7', () => {
    const dir = app('no-express-ts-app', { type: 'module' }, ['@types/node@22', 'typescript@7']);
    writeFileSync(
      path.join(dir, 'index.mts'),
      `import http from 'node:http';
import { createEventRouter, createFetchHandler, createNodeHandler, type AnyWebhookEvent } from 'service-webhooks';
const router = createEventRouter().on('ag.access_pass.issued', (event: AnyWebhookEvent) => void event.id);
http.createServer(createNodeHandler({ bearerTokens: ['t'], router }));
const fetchHandler: (request: Request) => Promise<Response> = createFetchHandler({ bearerTokens: ['t'], router });
export { fetchHandler };
`,
    );
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          target: 'es2022',
          strict: true,
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
        },
        files: ['index.mts'],
      }),
    );
    expect(() => run('node', ['-p', "require.resolve('@types/express/package.json')"], dir)).toThrow();
    run('node', [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], dir);
    // And under TypeScript 7, the app's own (the published types promise both).
    expect(run('npx', ['--no-install', 'tsc', '--version'], dir)).toMatch(/^Version 7\./);
    run('npx', ['--no-install', 'tsc', '-p', '.'], dir);
    // Every entry whose peer ships no types of its own, the test kit included (issue 19 item 3): a Fetch
    // or Hono user who wants only buildEvent installs neither supertest nor @types/supertest.
    for (const name of ['supertest', '@types/supertest'])
      expect(() => run('node', ['-p', `require.resolve('${name}/package.json')`], dir)).toThrow();
    writeEntriesApp(
      dir,
      SUBPATHS.filter((subpath) => !(subpath in PEER_TYPED)),
      "import { buildEvent } from 'service-webhooks/testing';\nexport const issued = buildEvent('ag.access_pass.issued');",
    );
    const app7 = path.join(dir, 'node_modules', 'typescript', 'bin', 'tsc');
    for (const mode of Object.keys(RESOLUTION_MODES) as ResolutionMode[]) {
      expect({ mode, errors: typeErrors(TSC, dir, mode) }).toEqual({ mode, errors: [] });
      // TypeScript 7 removed node10 resolution.
      if (mode !== 'node10') expect({ mode, ts7: typeErrors(app7, dir, mode) }).toEqual({ mode, ts7: [] });
    }
  }, 180_000);

  it('type-checks the entries of engines that ship their own types with only those engines, without supertest or skipLibCheck, in every resolution mode', () => {
    const dir = app('peer-typed-ts-app', { type: 'module' }, [
      '@types/node@22',
      ...Object.values(PEER_TYPED).flat(),
    ]);
    expect(() => run('node', ['-p', "require.resolve('supertest/package.json')"], dir)).toThrow();
    writeEntriesApp(dir, SUBPATHS);
    for (const mode of Object.keys(RESOLUTION_MODES) as ResolutionMode[]) {
      // pg-boss 12's own declarations do not compile under skipLibCheck false (they import `pg`
      // without @types/pg and a type pg-boss does not export): its defect, not ours, so only its own
      // files are excused; every error in ours still fails.
      const ours = typeErrors(TSC, dir, mode).filter((line) => !line.startsWith('node_modules/pg-boss/'));
      expect({ mode, errors: ours }).toEqual({ mode, errors: [] });
    }
  }, 180_000);

  // docs/testing.md as a newcomer reads it (issue 29 item 4): its install lines, its config files and
  // its suite, in an app that has nothing else, under jest + ts-jest and under vitest.
  describe("docs/testing.md's suite, run as written in an empty app", () => {
    const guide = readFileSync(path.join(ROOT, 'docs', 'testing.md'), 'utf8');
    /** Every fenced block of `lang`, in order. */
    const fenced = (lang: string) =>
      [...guide.matchAll(new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```$', 'gm'))].map(
        (m) => m[1] as string,
      );
    /** The config blocks, each named by its first line (`// jest.config.js`). */
    const configs = new Map(
      [...fenced('js'), ...fenced('jsonc')].map((code) => [
        (/^\/\/ (\S+)\n/.exec(code) ?? [])[1] ?? '',
        code.replace(/^\/\/ \S+\n/, ''),
      ]),
    );
    const [jestInstall, vitestInstall] = fenced('sh').map((code) => code.trim().split('\n'));

    /** A new app: the guide's `npm i` lines (the package from the tarball), its files and its suite. */
    function guideApp(name: string, installs: string[], files: string[]): string {
      const dir = path.join(work, name);
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true }));
      for (const line of installs) {
        const [npm, ...args] = line.split(' ').map((word) => (word === 'service-webhooks' ? tarball : word));
        expect(npm).toBe('npm');
        run('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline'], dir);
      }
      for (const file of files) {
        const code = configs.get(file);
        if (code === undefined) throw new Error(`docs/testing.md has no block for ${file}`);
        writeFileSync(path.join(dir, file), code);
      }
      for (const block of parseBlocks(guide, 'docs/testing.md')) {
        mkdirSync(path.join(dir, path.dirname(block.file)), { recursive: true });
        writeFileSync(path.join(dir, block.file), block.code);
      }
      return dir;
    }

    it('with jest and ts-jest', () => {
      const dir = guideApp('guide-jest', jestInstall ?? [], ['jest.config.js', 'tsconfig.json']);
      run('npx', ['--no-install', 'jest', '--ci', '--json', '--outputFile=result.json'], dir);
      const result = JSON.parse(readFileSync(path.join(dir, 'result.json'), 'utf8')) as {
        numPassedTests: number;
        numFailedTests: number;
      };
      expect(result).toMatchObject({ numPassedTests: 4, numFailedTests: 0 });
    }, 300_000);

    it('with vitest', () => {
      const dir = guideApp(
        'guide-vitest',
        [(jestInstall ?? [])[0] ?? '', ...(vitestInstall ?? [])],
        ['vitest.config.mjs'],
      );
      run('npx', ['--no-install', 'vitest', 'run', '--reporter=json', '--outputFile=result.json'], dir);
      const result = JSON.parse(readFileSync(path.join(dir, 'result.json'), 'utf8')) as {
        numPassedTests: number;
        numFailedTests: number;
      };
      expect(result).toMatchObject({ numPassedTests: 4, numFailedTests: 0 });
    }, 300_000);
  });
});
