import { GENERAL_NAME, type GeneralName } from '../lib/mtls/general-name';
import { matchSubtree, type SubtreeMatch } from '../lib/mtls/match-subtree';

const text = (type: number, value: string): GeneralName => ({ type, value: Buffer.from(value, 'latin1') });
const dns = (value: string) => text(GENERAL_NAME.dNSName, value);
const email = (value: string) => text(GENERAL_NAME.rfc822Name, value);
const uri = (value: string) => text(GENERAL_NAME.uri, value);
const ip = (...bytes: number[]): GeneralName => ({ type: GENERAL_NAME.iPAddress, value: Buffer.from(bytes) });

/**
 * The comparisons of OpenSSL's v3_ncons.c that the openssl table cannot reach through the openssl
 * CLI (an empty base, malformed addresses, ports): [what, name, base, expected].
 */
const ROWS: [string, GeneralName, GeneralName, SubtreeMatch][] = [
  ['an empty DNS base holds every name', dns('anything.example'), dns(''), 'match'],
  ['a DNS base holds itself', dns('tenant.example'), dns('tenant.example'), 'match'],
  ['a DNS base holds a name below it', dns('a.b.tenant.example'), dns('tenant.example'), 'match'],
  [
    'a DNS base does not hold a name ending in it off a dot',
    dns('xtenant.example'),
    dns('tenant.example'),
    'no-match',
  ],
  ['a DNS name shorter than the base', dns('example'), dns('tenant.example'), 'no-match'],
  ['a .domain base does not hold the domain', dns('tenant.example'), dns('.tenant.example'), 'no-match'],
  ['DNS is compared in any case', dns('A.TENANT.Example'), dns('tenant.EXAMPLE'), 'match'],
  ['an email without @', email('ops'), email('tenant.example'), 'unsupported-syntax'],
  ['an email at the base host', email('ops@tenant.example'), email('tenant.example'), 'match'],
  ['an email below the base host', email('ops@a.tenant.example'), email('tenant.example'), 'no-match'],
  ['an email under a .domain', email('ops@a.tenant.example'), email('.tenant.example'), 'match'],
  ['an email at the .domain itself', email('ops@tenant.example'), email('.tenant.example'), 'no-match'],
  [
    'a mailbox base, same mailbox, host in other case',
    email('ops@TENANT.example'),
    email('ops@tenant.example'),
    'match',
  ],
  [
    'a mailbox base, local part in other case',
    email('Ops@tenant.example'),
    email('ops@tenant.example'),
    'no-match',
  ],
  [
    'a mailbox base, a longer local part',
    email('ops2@tenant.example'),
    email('ops@tenant.example'),
    'no-match',
  ],
  ['an email whose local part holds @', email('"a@b"@tenant.example'), email('tenant.example'), 'match'],
  [
    'a URI host with a port',
    uri('https://hooks.tenant.example:8443/x'),
    uri('hooks.tenant.example'),
    'match',
  ],
  ['a URI host with a path', uri('https://hooks.tenant.example/x'), uri('hooks.tenant.example'), 'match'],
  ['a URI under a .domain', uri('https://hooks.tenant.example'), uri('.tenant.example'), 'match'],
  ['a URI at the .domain itself', uri('https://tenant.example'), uri('.tenant.example'), 'no-match'],
  ['a URI without //', uri('urn:tenant.example'), uri('tenant.example'), 'unsupported-syntax'],
  ['a URI with an empty host', uri('file:///etc/passwd'), uri('tenant.example'), 'unsupported-syntax'],
  ['an IPv4 address in its range', ip(10, 1, 2, 3), ip(10, 0, 0, 0, 255, 0, 0, 0), 'match'],
  ['an IPv4 address out of its range', ip(11, 1, 2, 3), ip(10, 0, 0, 0, 255, 0, 0, 0), 'no-match'],
  [
    'an IPv4 address against an IPv6 range',
    ip(10, 1, 2, 3),
    ip(...new Array<number>(32).fill(0)),
    'no-match',
  ],
  ['an address of 5 bytes', ip(10, 1, 2, 3, 4), ip(10, 0, 0, 0, 255, 0, 0, 0), 'unsupported-syntax'],
  ['a range of 7 bytes', ip(10, 1, 2, 3), ip(10, 0, 0, 0, 255, 0, 0), 'unsupported-syntax'],
  [
    'an otherName under an otherName constraint',
    text(GENERAL_NAME.otherName, ''),
    text(0, ''),
    'unsupported-type',
  ],
];

describe('matchSubtree compares a name with a subtree as OpenSSL does', () => {
  it.each(ROWS)('%s', (_what, name, base, expected) => {
    expect(matchSubtree(name, base)).toBe(expected);
  });
});
