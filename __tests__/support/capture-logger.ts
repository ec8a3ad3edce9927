import type { Logger } from '../../lib';

export interface LogRecord {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  meta: Record<string, unknown>;
}

/** A logger that keeps what it is told, for assertions. */
export function captureLogger(): Logger & {
  records: LogRecord[];
  messages(level: LogRecord['level']): string[];
} {
  const records: LogRecord[] = [];
  const at = (level: LogRecord['level']) => (meta: Record<string, unknown>, message: string) =>
    void records.push({ level, meta, message });
  return {
    records,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    messages: (level) => records.filter((r) => r.level === level).map((r) => r.message),
  };
}
