import { OptionsError } from '../options-error';

/** A bare PostgreSQL identifier, within pg-boss's own 50-byte limit on a schema's name. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,49}$/;

/**
 * The `schema` option, checked once: it is written into SQL as an identifier (pg-boss does the same),
 * so only a plain identifier is taken, never a value that could close it. The hint is the name with
 * what an identifier cannot hold turned to `_`.
 */
export function checkSchemaName(value: unknown, where: string): string {
  if (typeof value === 'string' && IDENTIFIER.test(value)) return value;
  const text = typeof value === 'string' ? value : '';
  const hint = `${/^\d/.test(text) ? '_' : ''}${text.replace(/[^A-Za-z0-9_]/g, '_')}`.slice(0, 50);
  throw new OptionsError(
    'ERR_SW_NAME',
    where,
    `schema must be a plain SQL identifier: 1–50 letters, digits or "_", not starting with a digit (got ${JSON.stringify(value)})${IDENTIFIER.test(hint) ? `; did you mean "${hint}"?` : ''}`,
  );
}
