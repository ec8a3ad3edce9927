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

/** Warnings and errors go to the console unless told otherwise: a lost failure is worse than noise. */
const consoleLogger: Logger = { warn: console.warn, error: console.error };

/** Resolves a user's logger option once, so the request path never checks which methods exist. */
export function resolveLogger(logger: Logger | false | undefined, where: string): ResolvedLogger {
  if (logger === false) return { debug: noop, info: noop, warn: noop, error: noop };
  const source = logger ?? consoleLogger;
  if (typeof source !== 'object' || source === null) {
    throw new OptionsError(
      'ERR_SW_LOGGER',
      where,
      'logger must be an object with debug/info/warn/error methods, or false',
    );
  }
  const resolved = {} as ResolvedLogger;
  for (const level of LEVELS) {
    const method = source[level];
    resolved[level] =
      typeof method === 'function'
        ? (meta, message) =>
            void (method as (...args: unknown[]) => unknown).call(
              source,
              meta,
              `[service-webhooks] ${message}`,
            )
        : noop;
  }
  return resolved;
}
