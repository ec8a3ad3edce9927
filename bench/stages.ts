// In-process cost of the pipeline, whole and by stage: `npm run bench -- --stages`.
import { createEventRouter, MemoryStore } from '../lib';
import { checkContent } from '../lib/core/event/check-content';
import { parseCloudEventEnvelope } from '../lib/core/event/cloud-event-envelope';
import { claimToken } from '../lib/idempotency/claim-token';
import { idempotencyKey } from '../lib/idempotency/store-keys';
import { decodeUtf8, parseJsonText } from '../lib/core/event/parse-json-body';
import { createReceiverCore } from '../lib/core/receiver-core';
import type { WebhookRequest } from '../lib/core/webhook-request';
import { openTelemetryTracing } from '../lib/observability/open-telemetry-tracing';
import { checkEventRules } from '../lib/events/event-rules';
import { normalizeEvent } from '../lib/events/normalize-event';
import { eventBody, TOKEN } from './bench-events';

const HEADERS: Record<string, string> = {
  'content-type': 'application/cloudevents+json; charset=utf-8',
  authorization: `Bearer ${TOKEN}`,
  'user-agent': 'Service-Webhooks/1.0',
};
const header = (name: string) => HEADERS[name];

/** A request as a door gives it; `now`: its body offered at once (`readNow`), as a buffered body can be. */
function request(bytes: Uint8Array, now = false): WebhookRequest {
  return {
    method: 'POST',
    header,
    hasHeaderPrefix: () => false,
    body: { hasBody: true, read: async () => bytes, readNow: now ? () => bytes : undefined },
  };
}

/**
 * CPU µs per call of `fn` over `n` calls, after a warm-up. CPU time, not wall time: on a busy
 * machine the time this process waits for a core is not the pipeline's cost.
 */
async function measure(n: number, fn: (i: number) => unknown): Promise<number> {
  for (let i = 0; i < Math.min(n, 20_000); i++) await fn(-1 - i);
  const started = process.cpuUsage();
  for (let i = 0; i < n; i++) await fn(i);
  const used = process.cpuUsage(started);
  return (used.user + used.system) / n;
}

export function makeCore(store = new MemoryStore({ logger: false })) {
  return createReceiverCore(
    {
      bearerTokens: [TOKEN],
      router: createEventRouter().on('ag.*', () => undefined),
      logger: false,
      idempotency: store,
    },
    'bench',
    openTelemetryTracing,
  );
}

/**
 * The whole pipeline, in process, CPU µs per distinct event. The bodies are built beforehand, a batch
 * at a time outside the timed part: making the test's input is not the pipeline's cost. `core`: another
 * build's, as bench/dist-pipeline.ts runs the bundles of dist/.
 */
export async function pipelineMicros(
  n = 200_000,
  core: Pick<ReturnType<typeof makeCore>, 'handle'> = makeCore(),
): Promise<number> {
  const batch = 10_000;
  let offset = 0;
  let micros = 0;
  // The first two batches warm up and are not counted.
  for (let counted = -2 * batch; counted < n; counted += batch) {
    const bodies = Array.from({ length: batch }, () => Buffer.from(eventBody(offset++, 'p')));
    const started = process.cpuUsage();
    for (const bytes of bodies) {
      const { answer } = await core.handle(request(bytes));
      if (answer.status !== 200) throw new Error(answer.body);
    }
    const used = process.cpuUsage(started);
    if (counted >= 0) micros += used.user + used.system;
  }
  return micros / n;
}

/** Per-stage µs, each stage measured alone on the same event. */
export async function stageMicros(n = 100_000): Promise<Record<string, number>> {
  const text = eventBody(1);
  const bytes = Buffer.from(text);
  const parsed: unknown = JSON.parse(text);
  const envelope = parseCloudEventEnvelope(parsed);
  const event = normalizeEvent(envelope, envelope.data, envelope as Record<string, unknown>);
  const store = new MemoryStore({ logger: false });
  const core = makeCore();
  const idBodies = Array.from({ length: n + 20_000 }, (_, i) => i);
  let k = 0;
  const stages: Record<string, number> = {
    'content checks': await measure(n, () => checkContent(HEADERS['content-type'], undefined, false)),
    'UTF-8 check + decode': await measure(n, () => decodeUtf8(bytes)),
    'JSON.parse (+ proto scan)': await measure(n, () => parseJsonText(text)),
    'envelope (fast path, zod when unsure)': await measure(n, () => parseCloudEventEnvelope(parsed)),
    'normalize + data (fast path)': await measure(n, () => normalizeEvent(envelope, envelope.data, envelope)),
    'per-type rules': await measure(n, () => checkEventRules(event.type, event.layout, event.data)),
    'key + token': await measure(n, (i) => idempotencyKey('', event.source, `evt_${i}`) + claimToken()),
    'MemoryStore claim + markDone': await measure(n, async () => {
      const key = `k${idBodies[k++ % idBodies.length]}_${k}`;
      const token = claimToken();
      await store.claim(key, token, 60_000);
      await store.markDone(key, token, 3_600_000);
    }),
    'whole pipeline (core.handle)': await measure(n, async (i) => {
      await core.handle(request(Buffer.from(eventBody(i + 10_000_000, 's'))));
    }),
    'the same, body at once (readNow)': await measure(n, async (i) => {
      await core.handle(request(Buffer.from(eventBody(i + 20_000_000, 's')), true));
    }),
  };
  store.close();
  return stages;
}

/** Heap after gc at every 100 000 of 1 000 000 distinct events through the pipeline, in MB. */
export async function memoryOverEvents(total = 1_000_000): Promise<number[]> {
  const gc = (globalThis as { gc?: () => void }).gc;
  const core = makeCore();
  const samples: number[] = [];
  for (let i = 0; i < total; i++) {
    await core.handle(request(Buffer.from(eventBody(i, 'm'))));
    if ((i + 1) % 100_000 === 0) {
      gc?.();
      samples.push(process.memoryUsage().heapUsed / 1024 / 1024);
    }
  }
  return samples;
}
