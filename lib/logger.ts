import { OptionsError } from './options-error';

/** One level of a {@link ResolvedLogger}: structured fields first, then the message. */
export type LogMethod = (meta: Record<string, unknown>, message: string) => void;

/**
 * Any object with some of `debug`, `info`, `warn`, `error`. Called pino-style, `(meta, message)`,
 * which both pino and `console` print usefully.
 */
export type Logger = Partial<Record<LogLevel, (...args: never[]) => unknown>>;
/** The four levels a {@link Logger} may have. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
/** A {@link Logger} with every level present (missing ones do nothing), each one contained. */
export type ResolvedLogger = Record<LogLevel, LogMethod>;

const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];
const noop: LogMethod = () => undefined;

/**
 * C0 and C1 controls, line and paragraph separators, and the bidirectional overrides: bytes a sender
 * controls (an id, an attribute name in a refusal's detail) that could forge a log line, colour a
 * terminal or reorder what an operator reads.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const CONTROLS = new RegExp(CONTROL.source, 'g');

/** `text` with every control character written as a visible escape (`\n`, `\u001b`). */
export function escapeControl(text: string): string {
  if (!CONTROL.test(text)) return text;
  return text.replace(CONTROLS, (c) =>
    c === '\n'
      ? '\\n'
      : c === '\r'
        ? '\\r'
        : c === '\t'
          ? '\\t'
          : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * Metadata with its strings escaped, plain objects and arrays copied a few levels deep; anything else
 * (an Error, a Date) is passed as it is, for the logger's own serializer.
 */
function escapeMeta(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return escapeControl(value);
  if (depth > 3 || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => escapeMeta(item, depth + 1));
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    copy[escapeControl(key)] = escapeMeta((value as Record<string, unknown>)[key], depth + 1);
  }
  return copy;
}

/** Never throws, whatever getters the value has: an error's stack is left out, only its name and message. */
function describe(value: unknown): string {
  try {
    if (value instanceof Error) return escapeControl(`${value.name}: ${value.message}`);
    if (typeof value === 'string') return JSON.stringify(value);
    const text = JSON.stringify(value);
    const shown = text === undefined ? String(value) : text.length > 200 ? `${text.slice(0, 200)}…` : text;
    return escapeControl(shown);
  } catch {
    return '[unprintable]';
  }
}

/** The message first, then the metadata on the same line: `message key=value key=value`. */
function formatForConsole(meta: Record<string, unknown>, message: string): string {
  const parts = [message];
  for (const key of Object.keys(meta)) parts.push(`${key}=${describe(meta[key])}`);
  return parts.join(' ');
}

/** Warnings and errors go to the console unless told otherwise: a lost failure is worse than noise. */
const consoleLogger: ResolvedLogger = {
  debug: noop,
  info: noop,
  warn: (meta, message) => console.warn(formatForConsole(meta, message)),
  error: (meta, message) => console.error(formatForConsole(meta, message)),
};

/**
 * A logger call can never throw into the request path or reject unhandled: a sink that is down, a
 * serializer that meets a circular value or a throwing getter is contained here and forgotten.
 */
function contained(call: LogMethod): LogMethod {
  return (meta, message) => {
    try {
      const result: unknown = call(escapeMeta(meta, 0) as Record<string, unknown>, escapeControl(message));
      if (typeof (result as Promise<unknown> | undefined)?.then === 'function') {
        (result as Promise<unknown>).then(undefined, () => undefined);
      }
    } catch {
      // Nowhere left to report it: the logger itself is what failed.
    }
  };
}

/** Resolves a user's logger option once, so the request path never checks which methods exist. */
export function resolveLogger(logger: Logger | false | undefined, where: string): ResolvedLogger {
  if (logger === false) return { debug: noop, info: noop, warn: noop, error: noop };
  if (logger === undefined) {
    return {
      debug: noop,
      info: noop,
      warn: contained((meta, message) => consoleLogger.warn(meta, `[service-webhooks] ${message}`)),
      error: contained((meta, message) => consoleLogger.error(meta, `[service-webhooks] ${message}`)),
    };
  }
  if (typeof logger !== 'object' || logger === null) {
    throw new OptionsError(
      'ERR_SW_LOGGER',
      where,
      'logger must be an object with debug/info/warn/error methods, or false',
    );
  }
  const resolved = {} as ResolvedLogger;
  for (const level of LEVELS) {
    const method = logger[level];
    resolved[level] =
      typeof method === 'function'
        ? contained((meta, message) =>
            (method as (...args: unknown[]) => unknown).call(logger, meta, `[service-webhooks] ${message}`),
          )
        : noop;
  }
  return resolved;
}
