import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { bullmqInbox } from '../lib/bullmq';
import { buildEvent, DELIVERY_HEADERS } from '../lib/testing';
import { builtPackage } from './support/built-package';
import { parseBlocks } from './support/readme-blocks';
import { describeWithRedis, startRedisServer, type RedisServer } from './support/redis-server';
import { freePort } from './support/server-binary';

const GUIDE = path.join(__dirname, '..', 'docs', 'inbox.md');
const TOKEN = 'guide-token';
const EVENTS = 12;

/** The guide's one block with a signal handler, compiled as a user's build would compile it. */
function guideProgram(handledFile: string): string {
  const blocks = parseBlocks(readFileSync(GUIDE, 'utf8'), 'docs/inbox.md').filter((b) =>
    b.code.includes('SIGTERM'),
  );
  expect(blocks).toHaveLength(1);
  const { outputText } = ts.transpileModule((blocks[0] as { code: string }).code, {
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
    },
  });
  // The block declares `db`; this one takes a while per event (so SIGTERM meets running handlers)
  // and writes down each event it handled.
  const db = `const db = { passes: { upsert: async (id) => {
    await new Promise((resolve) => setTimeout(resolve, 150));
    require('node:fs').appendFileSync(${JSON.stringify(handledFile)}, id + '\\n');
  } } };\n`;
  return db + outputText;
}

describeWithRedis('docs/inbox.md: the receiver and worker example shuts down on SIGTERM', () => {
  let redis: RedisServer;
  let dir: string;
  beforeAll(async () => {
    redis = await startRedisServer({ persistent: true });
    dir = mkdtempSync(path.join(os.tmpdir(), 'sw-guide-'));
  }, 60_000);
  afterAll(async () => {
    await redis?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('drains the server, closes the worker and the queue, exits 0, and loses no acknowledged event', async () => {
    const handledFile = path.join(dir, 'handled.txt');
    writeFileSync(handledFile, '');
    const file = path.join(dir, 'app.js');
    writeFileSync(file, guideProgram(handledFile));
    const port = await freePort();
    const { env } = await builtPackage();
    const child = spawn(process.execPath, [file], {
      env: { ...env, PORT: String(port), REDIS_URL: redis.url, SERVICE_WEBHOOK_TOKEN: TOKEN },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => void (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => void (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const url = `http://127.0.0.1:${port}/webhooks`;
      const deliver = async (id: string) => {
        const event = buildEvent('ag.access_pass.issued', { id: `pass-${id}` }, { id });
        const response = await fetch(url, {
          method: 'POST',
          headers: { ...DELIVERY_HEADERS, authorization: `Bearer ${TOKEN}` },
          body: JSON.stringify(event),
          signal: AbortSignal.timeout(10_000),
        });
        return { status: response.status, body: (await response.json()) as { status?: string } };
      };
      // Until the example listens (its worker starts first), bounded.
      const until = Date.now() + 30_000;
      for (;;) {
        const first = await deliver('evt-0').catch(() => undefined);
        if (first !== undefined) {
          expect(first).toEqual({ status: 200, body: expect.objectContaining({ status: 'queued' }) });
          break;
        }
        if (Date.now() > until || child.exitCode !== null) throw new Error(`never listened: ${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const acknowledged = ['evt-0'];
      for (let i = 1; i < EVENTS; i++) {
        const answer = await deliver(`evt-${i}`);
        expect(answer).toEqual({ status: 200, body: expect.objectContaining({ status: 'queued' }) });
        acknowledged.push(`evt-${i}`);
      }

      child.kill('SIGTERM');
      const bound = new Promise<'still running'>((resolve) => {
        const timer = setTimeout(() => resolve('still running'), 30_000);
        void exited.then(() => clearTimeout(timer));
      });
      expect(await Promise.race([exited, bound])).toBe(0);

      // Nothing acknowledged is lost: each event ran once, or waits in the queue for the next start.
      const handled = readFileSync(handledFile, 'utf8').split('\n').filter(Boolean);
      expect(new Set(handled).size).toBe(handled.length);
      const inbox = bullmqInbox({ connection: redis.url, logger: false });
      try {
        const status = await inbox.status();
        expect(status.active).toBe(0);
        expect(handled.length + status.waiting).toBe(acknowledged.length);
      } finally {
        await inbox.close();
      }
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    }
  }, 120_000);
});
