import type * as Zod from 'zod';
import { didYouMean } from '../did-you-mean';
import { zod } from '../lazy-zod';
import { EVENT_TYPES, familyOf, isEventType } from './catalogue';
import { checkDataFields } from './check-data-fields';
import { detectLayout } from './normalize-event';
import { SCENARIO_VERSION, type Scenario } from './scenario';

/** Bounds of a scenario, so a file cannot make a player send or wait without end. */
export const SCENARIO_LIMITS = { deliveries: 10_000, repeat: 100, delayMs: 6 * 60 * 60 * 1000 } as const;

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

let schema: Zod.ZodType | undefined;

function scenarioSchema(): Zod.ZodType {
  const z = zod();
  const event = z.strictObject({
    specversion: z.literal('1.0', { error: "must be '1.0'" }),
    id: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).max(256),
    source: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }),
    type: z.string({ error: 'must be a string' }),
    datacontenttype: z.literal('application/json', { error: "must be 'application/json'" }),
    dataschema: z.string({ error: 'must be a string' }).optional(),
    time: z
      .string({ error: 'must be a string' })
      .refine((t) => RFC3339.test(t) && !Number.isNaN(Date.parse(t)), 'must be an RFC 3339 timestamp'),
    data: z.record(z.string(), z.unknown(), { error: 'must be an object' }),
  });
  const delivery = z.strictObject({
    event,
    layout: z.enum(['A', 'B'], { error: "must be 'A' or 'B'" }),
    delayMs: z.number().int().min(0).max(SCENARIO_LIMITS.delayMs).optional(),
    repeat: z.number().int().min(0).max(SCENARIO_LIMITS.repeat).optional(),
    expect: z
      .strictObject({
        status: z.number().int().min(100).max(599).optional(),
        body: z.strictObject({ status: z.string({ error: 'must be a string' }) }).optional(),
      })
      .optional(),
  });
  return z.strictObject({
    scenarioVersion: z.literal(SCENARIO_VERSION, {
      error: `must be ${SCENARIO_VERSION}, the version this package reads; write the file again with this version`,
    }),
    description: z.string({ error: 'must be a string' }).optional(),
    deliveries: z.array(delivery, { error: 'must be an array' }).max(SCENARIO_LIMITS.deliveries),
  });
}

/** `deliveries[2].event.type`: where in the file, as a person finds it. */
function scenarioPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const part of path)
    text += typeof part === 'number' ? `[${part}]` : `${text === '' ? '' : '.'}${String(part)}`;
  return text === '' ? '(the top level)' : text;
}

/** The keys each object of the format knows, for a "did you mean" on an unknown one. */
function knownKeys(path: readonly PropertyKey[]): readonly string[] {
  const last = path.at(-1);
  if (path.length === 0) return ['scenarioVersion', 'description', 'deliveries'];
  if (last === 'event')
    return ['specversion', 'id', 'source', 'type', 'datacontenttype', 'dataschema', 'time', 'data'];
  if (last === 'expect') return ['status', 'body'];
  if (last === 'body') return ['status'];
  return ['event', 'layout', 'delayMs', 'repeat', 'expect'];
}

function issueText(issue: Zod.core.$ZodIssue): string {
  const where = scenarioPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] as string;
    const hint = didYouMean(key, knownKeys(issue.path));
    return `${where}: unknown key "${key}"${hint === undefined ? '' : `; did you mean "${hint}"?`}`;
  }
  return `${where}: ${issue.message}`;
}

/**
 * Checks a scenario (the parsed JSON of a file) and returns it typed. A broken one throws a TypeError
 * naming the path inside the file (`deliveries[2].event.type`) and, for a misspelling, the closest
 * name: an unknown key, an unknown event type, a data field the type's family does not carry.
 */
export function parseScenario(value: unknown, where: string): Scenario {
  schema ??= scenarioSchema();
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const first = parsed.error.issues[0] as Zod.core.$ZodIssue;
    throw new TypeError(`[service-webhooks] ${where}: ${issueText(first)}`);
  }
  const scenario = parsed.data as Scenario;
  scenario.deliveries.forEach((delivery, index) => {
    const at = `deliveries[${index}].event`;
    const { event } = delivery;
    if (!isEventType(event.type)) {
      const hint = didYouMean(event.type, EVENT_TYPES);
      throw new TypeError(
        `[service-webhooks] ${where}: ${at}.type: unknown event type "${event.type}"${hint === undefined ? '' : `; did you mean "${hint}"?`} (spec section 6 lists them)`,
      );
    }
    let layout: string;
    try {
      layout = detectLayout(event, event.data);
    } catch (error) {
      throw new TypeError(`[service-webhooks] ${where}: ${at}: ${(error as Error).message}`);
    }
    if (layout !== delivery.layout)
      throw new TypeError(
        `[service-webhooks] ${where}: deliveries[${index}].layout: is "${delivery.layout}" but the event is in layout ${layout}; write "layout": "${layout}"`,
      );
    // The spec shows no data of the webhook family (spec 6 rule 8): what an ag.webhook.cert_expiring
    // carries is its sender's (the emulator's certificate fields), so a recorded one is kept as it came.
    if (familyOf(event.type) !== 'webhook')
      checkDataFields(event.type, delivery.layout, event.data, `${where}: ${at}.data`);
  });
  return scenario;
}
