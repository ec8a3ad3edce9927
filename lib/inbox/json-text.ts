/** A container being written: its values (an array's, or an object's by `keys`), and how far. */
interface Frame {
  value: object;
  keys: string[] | undefined;
  next: number;
  written: number;
}

/** What JSON.stringify leaves out of an object (and writes as null in an array). */
const omitted = (value: unknown) =>
  value === undefined || typeof value === 'function' || typeof value === 'symbol';

function resolved(value: unknown, key: string): unknown {
  const toJSON = (value as { toJSON?: unknown } | null | undefined)?.toJSON;
  return typeof toJSON === 'function' ? (toJSON as (key: string) => unknown).call(value, key) : value;
}

/**
 * `JSON.stringify(value)`, at any depth. V8's own recursion overflows the stack at a few thousand
 * levels (an open data field nested 5,000 deep is 10 KB, far under the body limit), and an event the
 * receiver accepted must be queued: so past that, the same text is written with a stack of our own.
 */
export function jsonText(value: unknown): string {
  try {
    const text = JSON.stringify(value) as string | undefined;
    if (text !== undefined) return text;
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return deepJsonText(value);
  }
  throw new TypeError('[service-webhooks] the value has no JSON text (undefined, a function or a symbol)');
}

function deepJsonText(root: unknown): string {
  const parts: string[] = [];
  const stack: Frame[] = [];
  // A cycle fails as JSON.stringify's does, never loops: the containers being written, by identity.
  const open = new Set<object>();
  const write = (value: unknown) => {
    if (typeof value !== 'object' || value === null) {
      parts.push(JSON.stringify(value));
      return;
    }
    if (open.has(value)) throw new TypeError('[service-webhooks] cannot queue a value with a cycle');
    open.add(value);
    const keys = Array.isArray(value) ? undefined : Object.keys(value);
    parts.push(keys === undefined ? '[' : '{');
    stack.push({ value, keys, next: 0, written: 0 });
  };
  write(resolved(root, ''));
  for (let top = stack.at(-1); top !== undefined; top = stack.at(-1)) {
    const values = top.value as Record<string, unknown>;
    const length = top.keys?.length ?? (top.value as unknown[]).length;
    let item: { key: string; value: unknown } | undefined;
    while (item === undefined && top.next < length) {
      const key = top.keys?.[top.next] ?? String(top.next);
      top.next++;
      const value = resolved(values[key], key);
      if (top.keys === undefined) item = { key, value: omitted(value) ? null : value };
      else if (!omitted(value)) item = { key, value };
    }
    if (item === undefined) {
      parts.push(top.keys === undefined ? ']' : '}');
      open.delete(top.value);
      stack.pop();
      continue;
    }
    if (top.written++ > 0) parts.push(',');
    if (top.keys !== undefined) parts.push(JSON.stringify(item.key), ':');
    write(item.value);
  }
  return parts.join('');
}
