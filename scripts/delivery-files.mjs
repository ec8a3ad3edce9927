// The lib/ files one delivery runs code in, counted by V8's precise coverage: on the sync path
// (createNodeHandler with the handler in the router) and through the BullMQ inbox (a receiver that
// queues, a worker that runs the handler). One warm-up delivery first, so module loading and first-use
// setup are not counted; then the coverage counters are reset and one delivery is sent.
// docs/where-things-live.md quotes the figures.
//
//   source /tmp/runtimes.env && node scripts/delivery-files.mjs [--list]
//
// Starts its own redis-server on a free 127.0.0.1 port in a temporary directory and stops it at the end.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { Session } from 'node:inspector/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// A reader that stops early (`| head`) must not end the process before the servers are stopped.
process.stdout.on('error', (error) => {
  if (error.code !== 'EPIPE') throw error;
});

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const LIB = path.join(ROOT, 'lib') + path.sep;
const require = createRequire(import.meta.url);
const ts = require('typescript');
const list = process.argv.includes('--list');

// lib/ as CommonJS, compiled file by file, so each file stays its own script for the coverage.
require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(readFileSync(filename, 'utf8'), {
    fileName: filename,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
      experimentalDecorators: true,
    },
  });
  module._compile(outputText, filename);
};

const TOKEN = 'delivery-files-token';
const { createEventRouter, createNodeHandler } = require(path.join(ROOT, 'lib/index.ts'));
const { bullmqInbox } = require(path.join(ROOT, 'lib/bullmq/index.ts'));
const { buildEvent } = require(path.join(ROOT, 'lib/testing/index.ts'));
const { Queue } = require('bullmq');

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

async function within(what, ms, check) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${what}: not within ${ms} ms`);
}

function pong(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(500, () => socket.destroy());
    socket.on('error', () => resolve(false));
    socket.on('close', () => resolve(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => {
      resolve(data.toString().startsWith('+PONG'));
      socket.destroy();
    });
  });
}

function post(port, body) {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/cloudevents+json' },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

async function listen(handler) {
  const server = http.createServer(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

let sent = 0;
function delivery() {
  sent += 1;
  return JSON.stringify(buildEvent('ag.access_pass.issued', {}, { id: `delivery-files-${sent}` }));
}

/** The lib/ files (relative to lib/) with a function run since the last take. */
async function touched(session) {
  const { result } = await session.post('Profiler.takePreciseCoverage');
  return result
    .filter((script) => script.url.startsWith(LIB) || script.url.startsWith(pathToFileURL(LIB).href))
    .filter((script) => script.functions.some((fn) => fn.ranges[0].count > 0))
    .map((script) =>
      path.relative(LIB, script.url.startsWith('file:') ? fileURLToPath(script.url) : script.url),
    )
    .sort();
}

function report(name, files) {
  const folders = {};
  for (const file of files) {
    const folder = path.dirname(file);
    folders[folder] = (folders[folder] ?? 0) + 1;
  }
  const byFolder = Object.entries(folders)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([folder, count]) => `${folder} ${count}`)
    .join(', ');
  console.log(`${name}: ${files.length} files (${byFolder})`);
  if (list) for (const file of files) console.log(`  ${file}`);
}

async function syncPath(session) {
  let ran = 0;
  const router = createEventRouter().on('ag.access_pass.issued', () => void (ran += 1));
  const server = await listen(createNodeHandler({ bearerTokens: [TOKEN], router }));
  try {
    const { port } = server.address();
    if ((await post(port, delivery())) !== 200 || ran !== 1) throw new Error('the warm-up delivery failed');
    const body = delivery();
    await touched(session);
    if ((await post(port, body)) !== 200 || ran !== 2) throw new Error('the delivery failed');
    report('sync path', await touched(session));
  } finally {
    server.close();
  }
}

async function throughTheInbox(session) {
  const dir = mkdtempSync(path.join(tmpdir(), 'delivery-files-'));
  const redisPort = await freePort();
  const redis = spawn(
    'redis-server',
    [
      '--port',
      String(redisPort),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
      '--dir',
      dir,
    ],
    {
      stdio: 'ignore',
    },
  );
  const connection = `redis://127.0.0.1:${redisPort}`;
  const name = 'delivery-files';
  const queue = new Queue(name, { connection: { host: '127.0.0.1', port: redisPort } });
  const inbox = bullmqInbox({ connection, name });
  let server;
  let worker;
  try {
    await within('redis-server', 10_000, () => pong(redisPort));
    let ran = 0;
    worker = await inbox.startWorker(
      createEventRouter().on('ag.access_pass.issued', () => void (ran += 1)),
      {
        concurrency: 1,
      },
    );
    server = await listen(createNodeHandler({ bearerTokens: [TOKEN], router: createEventRouter(), inbox }));
    const { port } = server.address();
    const settled = async () => {
      const counts = await queue.getJobCounts('wait', 'active', 'delayed', 'prioritized');
      return Object.values(counts).every((count) => count === 0);
    };
    if ((await post(port, delivery())) !== 200) throw new Error('the warm-up delivery was not queued');
    await within('the warm-up delivery', 10_000, async () => ran === 1 && (await settled()));
    const body = delivery();
    await touched(session);
    if ((await post(port, body)) !== 200) throw new Error('the delivery was not queued');
    await within('the delivery', 10_000, async () => ran === 2 && (await settled()));
    report('through the BullMQ inbox', await touched(session));
  } finally {
    server?.close();
    await worker?.close();
    await inbox.close();
    await queue.close();
    redis.kill('SIGTERM');
    await new Promise((resolve) => redis.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
await syncPath(session);
await throughTheInbox(session);
session.disconnect();
