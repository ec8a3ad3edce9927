import type { z as Z } from 'zod';
import {
  InvalidEventError,
  MAX_FIELD_ERRORS,
  schemaError,
  type FieldError,
} from '../../events/invalid-event-error';
import { DATETIME_OFFSET } from '../../events/fast-event-data';
import { zod } from '../../lazy-zod';

/**
 * An id or source of only spaces or control characters is empty to every reader (a log, a dashboard,
 * the Service's own retry key), so it is refused as CloudEvents refuses an empty one.
 */
const VISIBLE = /[^\s\p{Cc}]/u;

/**
 * The CloudEvents context attributes, which are no extensions (`data_base64` would fail their pattern;
 * the rest are only spared the regex). A switch, not a Set: the names come from JSON.parse interned,
 * so a case is a pointer comparison, where a Set looked each key up by its hash (a loop over the
 * bench body's keys: 2 to 4 times as long).
 */
function isContextAttribute(name: string): boolean {
  switch (name) {
    case 'id':
    case 'source':
    case 'type':
    case 'specversion':
    case 'time':
    case 'data':
    case 'datacontenttype':
    case 'dataschema':
    case 'subject':
    case 'data_base64':
      return true;
    default:
      return false;
  }
}

const EXTENSION_NAME = /^[a-z0-9]{1,20}$/;

/** Builds the schema (and loads zod) the first time an envelope is not one the fast path decides. */
function build() {
  const z = zod();
  const required = (rule: string) => ({
    error: (issue: { input: unknown }) => (issue.input === undefined ? 'is required' : rule),
  });
  const nonEmptyString = (rule = 'must be a non-empty string') =>
    z.string(required(rule)).min(1, { error: rule });
  const identifier = (rule: string) => nonEmptyString(rule).regex(VISIBLE, { error: rule });
  const fields = {
    specversion: z.literal('1.0', required('must be exactly "1.0"')),
    id: identifier('must be a non-empty string with a visible character'),
    source: identifier('must be a non-empty URI-reference with a visible character'),
    type: nonEmptyString(),
    datacontenttype: nonEmptyString().nullish(),
    dataschema: z.url({ error: 'must be an absolute URI' }).nullish(),
    subject: nonEmptyString().nullish(),
    time: z.iso.datetime({ offset: true, error: 'must be an RFC 3339 timestamp' }).nullish(),
    data: z.unknown().optional(),
    data_base64: z.base64({ error: 'must be base64' }).nullish(),
  };
  // A CloudEvents 1.0 envelope in the JSON format: `null` optional attributes count as absent, as the
  // JSON format allows; extension attributes pass through.
  const envelope = z
    .looseObject(fields)
    .refine((value) => value.data === undefined || value.data_base64 == null, {
      path: ['data_base64'],
      error: 'must not be sent together with data',
    });
  return { envelope, dataschema: fields.dataschema };
}

let built: ReturnType<typeof build> | undefined;
const schemas = () => (built ??= build());

/** The envelope schema the fast path agrees with (a property test checks it). */
export const cloudEventEnvelopeSchema = () => schemas().envelope;

/** The pattern `time` is checked with: zod's own, written out (a test checks they stay the same). */
const RFC3339 = DATETIME_OFFSET;
/** A `dataschema` repeats across events (one per resource version), so its URL check is remembered. */
const knownSchemas = new Map<string, boolean>();
const MAX_KNOWN_SCHEMAS = 256;

/**
 * The last URL asked about, and its answer: consecutive events commonly carry the same one, and each
 * event's is a new string, which the map must hash before it can look it up; comparing it with the
 * last one costs less (callgrind, the in-process pipeline: ~770 instructions an event fewer).
 */
let lastSchema: string | undefined;
let lastSchemaOk = false;

function schemaUrlOk(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  if (value === lastSchema) return lastSchemaOk;
  let ok = knownSchemas.get(value);
  if (ok === undefined) {
    // Whitespace would be trimmed by the schema, changing the value: leave those to it (and a URL
    // remembered here has none, so the check is made once per URL, not per event).
    if (/\s/.test(value)) return false;
    ok = schemas().dataschema.safeParse(value).success;
    if (knownSchemas.size < MAX_KNOWN_SCHEMAS) knownSchemas.set(value, ok);
  }
  lastSchema = value;
  lastSchemaOk = ok;
  return ok;
}

const nonEmpty = (value: unknown) => typeof value === 'string' && value.length > 0;
/** A first character in `!`…`~` is visible (neither space nor control): the regex is left for the rest. */
const visible = (value: unknown) => {
  if (typeof value !== 'string') return false;
  const first = value.charCodeAt(0);
  return (first > 0x20 && first < 0x7f) || VISIBLE.test(value);
};

/**
 * The envelope as the schema would return it, decided by hand for the shape the Service sends;
 * `undefined` for anything else, which the schema then checks and explains. A property test checks
 * the two agree.
 */
export function fastEnvelope(body: Record<string, unknown>): CloudEventEnvelope | undefined {
  const { specversion, id, source, type, datacontenttype, dataschema, subject, time, data_base64 } = body;
  if (specversion !== '1.0' || !visible(id) || !visible(source) || !nonEmpty(type)) return undefined;
  if ((datacontenttype != null && !nonEmpty(datacontenttype)) || (subject != null && !nonEmpty(subject))) {
    return undefined;
  }
  if (data_base64 != null || (dataschema != null && !schemaUrlOk(dataschema))) return undefined;
  if (time != null && !(typeof time === 'string' && RFC3339.test(time))) return undefined;
  return body as CloudEventEnvelope;
}

/**
 * A CloudEvents 1.0 envelope in the JSON format, as the receiver validated it (`null` optional
 * attributes count as absent, as the JSON format allows); extension attributes pass through.
 */
export interface CloudEventEnvelope {
  /** Always `'1.0'`. */
  specversion: '1.0';
  /** The event's id: with `source`, what a redelivery is recognised by. */
  id: string;
  /** Who sent it: `/service/<origin>` in layout A. */
  source: string;
  /** The event type: `ag.access_pass.issued`. */
  type: string;
  /** The media type of `data`, when sent. */
  datacontenttype?: string | null | undefined;
  /** Layout A's schema URL; absent in layout B. */
  dataschema?: string | null | undefined;
  /** The subject, when sent. */
  subject?: string | null | undefined;
  /** When it happened, an RFC 3339 timestamp, when sent. */
  time?: string | null | undefined;
  /** The event's data, as sent (before normalization). */
  data?: unknown;
  /** The data as base64, instead of `data`; never sent together with it. */
  data_base64?: string | null | undefined;
  /** Extension attributes: 1 to 20 lowercase letters or digits each. */
  [extension: string]: unknown;
}

/** The interface says what the schema returns, no more and no less: the build fails if they drift. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const envelopeMatchesSchema: Same<
  CloudEventEnvelope,
  Z.output<ReturnType<typeof build>['envelope']>
> = true;

/** Extension names are checked by hand, counting them all but keeping only the first few. */
function checkExtensionNames(body: Record<string, unknown>): void {
  const errors: FieldError[] = [];
  let count = 0;
  for (const name in body) {
    if (isContextAttribute(name) || EXTENSION_NAME.test(name)) continue;
    if (count++ < MAX_FIELD_ERRORS) {
      errors.push({
        field: name,
        rule: 'is not a valid extension attribute name: use 1 to 20 lowercase letters or digits',
      });
    }
  }
  const [first] = errors;
  if (first === undefined) return;
  throw new InvalidEventError({
    slug: 'invalid-cloudevent',
    detail: `CloudEvent attribute "${first.field}" ${first.rule}.`,
    field: first.field,
    errors,
    errorCount: count,
  });
}

/** Validates a parsed body as one CloudEvent (structured mode; batches are not supported). */
export function parseCloudEventEnvelope(body: unknown): CloudEventEnvelope {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    const got = Array.isArray(body)
      ? 'an array (batch mode is not supported)'
      : `a JSON ${body === null ? 'null' : typeof body}`;
    throw new InvalidEventError({
      slug: 'not-a-cloudevent',
      detail: `Expected one CloudEvent as a JSON object, got ${got}; batch mode is not supported.`,
    });
  }
  checkExtensionNames(body as Record<string, unknown>);
  const fast = fastEnvelope(body as Record<string, unknown>);
  if (fast !== undefined) return fast;
  const result = schemas().envelope.safeParse(body);
  if (!result.success) {
    throw schemaError(result.error, { prefix: '', slug: 'invalid-cloudevent', what: 'CloudEvent attribute' });
  }
  return result.data;
}
