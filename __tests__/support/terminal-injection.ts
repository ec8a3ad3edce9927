/*
 * A value the Service or a sender controls, built to take over a terminal (issue 28 item 8), and what
 * the receiver's log writes for it: every command that prints it must print the second.
 */

/** A newline and a carriage return, an OSC title, a CSI clear, a C1 CSI, bidi override, line separator. */
export const HOSTILE =
  'evt_1\n12:00:00  --> forged [x]\r\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eevil\u2028end';

/** {@link HOSTILE} as the receiver's log escapes it. */
export const ESCAPED =
  'evt_1\\n12:00:00  --> forged [x]\\r\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202eevil\\u2028end';

/** Any control a terminal acts on, but the newline that ends each line. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

/** Output with no byte a terminal acts on, {@link HOSTILE} shown escaped, and exactly `count` lines. */
export function expectEscaped(text: string, count: number): void {
  expect(text).not.toMatch(RAW_CONTROL);
  expect(text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n')).toHaveLength(count);
  expect(text).toContain(ESCAPED);
}
