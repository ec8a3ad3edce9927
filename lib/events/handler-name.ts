import { OptionsError } from '../options-error';

/** The longest handler name: it is part of a store key and a metrics label. */
const MAX_HANDLER_NAME_LENGTH = 128;

// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Checks a `name` option: undefined when none was given. */
export function checkHandlerName(name: unknown, method: string): string | undefined {
  if (name === undefined) return undefined;
  if (
    typeof name !== 'string' ||
    name.length === 0 ||
    name.length > MAX_HANDLER_NAME_LENGTH ||
    CONTROL.test(name)
  ) {
    const got = typeof name === 'string' ? `a string of ${name.length} characters` : typeof name;
    throw new OptionsError(
      'ERR_SW_ROUTER',
      method,
      `name must be a string of 1 to ${MAX_HANDLER_NAME_LENGTH} characters without control characters (got ${got}); name the handler after what it does, e.g. { name: 'crm' }`,
    );
  }
  return name;
}
