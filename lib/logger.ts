import { OptionsError } from './options-error';

type LogMethod = (meta: Record<string, unknown>, message: string) => void;

/**
 * Any object with some of `debug`, `info`, `warn`, `error`. Called pino-style, `(meta, message)`,
 * which both pino and `console` print usefully.
 */
export type Logger = Partial<Record<LogLevel, (...args: never[]) => unknown>>;
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type ResolvedLogger = Record<LogLevel, LogMethod>;

const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];
const noop: LogMethod = () => undefined;

/** Never throws, whatever getters the value has: an error's stack is left out, only its name and message. */
function describe(value: unknown): string {
  try {
    if (value instanceof Error) return `${value.name}: ${value.message}`;
    if (typeof value === 'string') return JSON.stringify(value);
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 200 ? `${text.slice(0, 200)}…` : text;
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
      const result: unknown = call(meta, message);
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
