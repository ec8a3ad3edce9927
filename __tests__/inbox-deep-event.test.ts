// An event the receiver accepts is one the inbox queues and the worker runs, at any depth.
import { createEventRouter, type AnyWebhookEvent } from '../lib';
import { buildEvent } from '../lib/testing';
import { binaryMode, delivery, TOKEN } from './support/contract-rows';
import { nodeDoor, type OpenDoor } from './support/doors';
import { describeEachEngine } from './support/describe-each-engine';
import { eventually } from './support/inbox-engines';

/** `[[[…"leaf"…]]]`, `levels` deep: 2 bytes a level. */
const deepText = (levels: number) => `${'['.repeat(levels)}"leaf"${']'.repeat(levels)}`;

/** How deep `value` nests arrays, counted without recursion. */
function depthOf(value: unknown): { levels: number; leaf: unknown } {
  let levels = 0;
  while (Array.isArray(value) && value.length === 1) {
    value = value[0];
    levels++;
  }
  return { levels, leaf: value };
}

/** A delivery whose open `metadata` field holds `levels` of nesting, written as text. */
function deepDelivery(id: string, levels: number, binary = false) {
  const event = buildEvent('ag.access_pass.issued', { metadata: { deep: 'HOLE' } } as never, { id });
  if (!binary) return delivery(event, {}, JSON.stringify(event).replace('"HOLE"', deepText(levels)));
  const data = binaryMode.body.replace(/}$/, `,"metadata":{"deep":${deepText(levels)}}}`);
  return { headers: { ...binaryMode.headers, 'ce-id': id }, body: data };
}

let queues = 0;

describeEachEngine('a deeply nested event through the inbox on $name', (_engine, server) => {
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of opened.reverse()) await o.close();
    opened.length = 0;
  });

  it.each([
    { name: '5,000 levels (10 KB)', levels: 5_000, binary: false },
    { name: '100,000 levels (200 KB)', levels: 100_000, binary: false },
    { name: '5,000 levels in binary mode', levels: 5_000, binary: true },
  ])(
    'is queued (200), and the worker runs its handler once with the data: $name',
    async ({ levels, binary }) => {
      const inbox = server().inbox(`deep-${process.pid}-${++queues}`);
      opened.push(inbox);
      const d: OpenDoor = await nodeDoor.open({
        bearerTokens: [TOKEN],
        router: createEventRouter(),
        logger: false,
        inbox,
      });
      opened.push(d);
      const id = `evt_deep_${levels}_${String(binary)}`;
      const answer = await d.send(deepDelivery(id, levels, binary));
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text)).toMatchObject({ id, status: 'queued' });

      const seen: { id: string; levels: number; leaf: unknown }[] = [];
      const router = createEventRouter().onAny((event: AnyWebhookEvent) => {
        const metadata = (event.data as { metadata?: { deep?: unknown } }).metadata;
        seen.push({ id: event.id, ...depthOf(metadata?.deep) });
      });
      const worker = await inbox.startWorker(router, { attempts: 1, logger: false });
      opened.push(worker);
      await eventually('the handler ran', () => seen.length === 1, 30_000);
      await eventually(
        'the job completed',
        async () => (await inbox.status()).waiting + (await inbox.status()).active === 0,
      );
      expect(seen).toEqual([{ id, levels, leaf: 'leaf' }]);
      expect(await inbox.status()).toMatchObject({ waiting: 0, active: 0, dead: 0 });
    },
    60_000,
  );
});
