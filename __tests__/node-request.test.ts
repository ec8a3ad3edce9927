import { joinedHeader, nodeRequest } from '../lib/adapters/incoming-message/node-request';
import type { IncomingMessage } from 'node:http';

/** What node:http makes of these header lines: the first of each name in `headers`, all in `rawHeaders`. */
function request(lines: [string, string][]): IncomingMessage {
  const headers: Record<string, string> = {};
  for (const [name, value] of lines) headers[name.toLowerCase()] ??= value;
  return { method: 'POST', headers, rawHeaders: lines.flat(), socket: {} } as unknown as IncomingMessage;
}

describe('a header that must appear once, read from node:http', () => {
  // A line sent in lower case is compared as it is; any other is lower-cased first: both count.
  it.each<[string, [string, string][], string | undefined]>([
    ['one line', [['authorization', 'Bearer a']], 'Bearer a'],
    [
      'two lines, lower case',
      [
        ['authorization', 'Bearer a'],
        ['authorization', 'Bearer b'],
      ],
      'Bearer a, Bearer b',
    ],
    [
      'two lines, the second in capitals',
      [
        ['authorization', 'Bearer a'],
        ['AUTHORIZATION', 'Bearer b'],
      ],
      'Bearer a, Bearer b',
    ],
    [
      'two lines, the first capitalised',
      [
        ['Authorization', 'Bearer a'],
        ['authorization', 'Bearer b'],
      ],
      'Bearer a, Bearer b',
    ],
    [
      'one line beside another name of its length',
      [
        ['x-webhook-ids', 'x'],
        ['authorization', 'Bearer a'],
        ['X-Webhook-Ids', 'y'],
      ],
      'Bearer a',
    ],
  ])('joins every line of it: %s', (_name, lines, expected) => {
    const req = request(lines);
    expect(joinedHeader(req, 'authorization')).toBe(expected);
    expect(nodeRequest(req).header('authorization')).toBe(expected);
  });

  it('joins the lines of Content-Type as of Authorization', () => {
    const req = request([
      ['content-type', 'application/json'],
      ['Content-Type', 'text/plain'],
    ]);
    expect(nodeRequest(req).header('content-type')).toBe('application/json, text/plain');
  });
});
