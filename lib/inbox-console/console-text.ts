import { escapeHtml } from '../escape-html';
import { escapeControl } from '../logger';

/**
 * A value for the page: control characters and bidirectional overrides written as visible escapes
 * (`\u202e`), so text a sender chose cannot reorder what an operator reads, then HTML-escaped.
 */
export function text(value: unknown): string {
  return escapeHtml(escapeControl(String(value)));
}

/** As {@link text}, keeping line breaks: for pretty JSON in a `<pre>`. */
export function block(value: string): string {
  return value.split('\n').map(text).join('\n');
}

/** An age in ms as an operator reads it: `42 s`, `7 min`, `3 h 5 min`; `—` for none. */
export function age(ms: number | null): string {
  if (ms === null) return '—';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  return h < 48 ? `${h} h ${min % 60} min` : `${Math.floor(h / 24)} days`;
}

/** A time as ISO 8601 UTC to the second, `—` for none. */
export function when(date: Date | string | null | undefined): string {
  if (date === null || date === undefined) return '—';
  const d = typeof date === 'string' ? new Date(date) : date;
  return Number.isNaN(d.getTime()) ? text(date) : `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}
