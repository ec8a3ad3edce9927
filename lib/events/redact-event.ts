import { createHmac, randomBytes } from 'node:crypto';
import type { DeliveryEnvelope } from './build-event';

/**
 * The personal and credential fields the spec's events carry (spec 2.2 to 2.4), wherever they sit in
 * `data` (top level, `details`, a device, layout B's flat fields, `metadata`): the holder's name,
 * employee id and title, the platform user id, the tag UID, and the credential's card number, site
 * code and file data.
 */
export const PERSONAL_FIELDS: readonly string[] = [
  'full_name',
  'employee_id',
  'title',
  'apple_user_id',
  'tag_id',
  'card_number',
  'site_code',
  'file_data',
  'email',
  'phone',
  'phone_number',
];

// The spec names no email or phone field, but `metadata` is the customer's own: a string that looks
// like one is personal wherever it is.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE = /^\+?[\d ().-]{7,20}$/;
const DATE = /^\d{4}-\d{2}-\d{2}/;
const isPhone = (value: string) =>
  PHONE.test(value) && !DATE.test(value) && value.replace(/\D/g, '').length >= 7;

/** Options of {@link createRedactor}. */
export interface RedactOptions {
  /** More field names to redact, anywhere in `data`, beside {@link PERSONAL_FIELDS}. Defaults to none. */
  fields?: readonly string[];
  /**
   * The key the fakes are derived from. Defaults to a random one per redactor: the same value gets the
   * same fake within one recording, and no fake can be traced back to its value by guessing.
   */
  key?: Buffer;
}

// A short value has few fakes of its shape (a one-digit site code ten), so a draw may give the value
// back: it is drawn again, still derived from the key, so the same value keeps the same fake.
const DRAWS = 32;

/**
 * Each character replaced by one of its own kind (digit, hex letter, letter, same case); the rest
 * kept. Never the value itself, unless it has nothing to replace.
 */
function fakeOf(value: string, key: Buffer): string {
  let out = value;
  for (let draw = 0; draw < DRAWS && out === value; draw++) out = drawFake(value, key, draw);
  return out;
}

function drawFake(value: string, key: Buffer, draw: number): string {
  let bytes = Buffer.alloc(0);
  // The first draw's input is what it always was, so fakes recorded before stay the same.
  const salt = draw === 0 ? '' : `${draw}\0`;
  for (let block = 0; bytes.length < value.length; block++)
    bytes = Buffer.concat([bytes, createHmac('sha256', key).update(`${salt}${block}\0${value}`).digest()]);
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i] as string;
    const b = bytes[i] as number;
    if (c >= '0' && c <= '9') out += String(b % 10);
    else if (c >= 'a' && c <= 'f') out += 'abcdef'[b % 6];
    else if (c >= 'A' && c <= 'F') out += 'ABCDEF'[b % 6];
    else if (c >= 'a' && c <= 'z') out += String.fromCharCode(97 + (b % 26));
    else if (c >= 'A' && c <= 'Z') out += String.fromCharCode(65 + (b % 26));
    else if (/\p{L}/u.test(c)) out += String.fromCharCode(97 + (b % 26));
    else out += c;
  }
  return out;
}

/**
 * A function that returns a copy of an event with every personal field (and every email or phone
 * number in a string) replaced by a stable fake of the same shape: a 14-hex-digit tag id stays 14
 * hex digits, a card number stays digits, so a recorded scenario still validates. Numbers are
 * replaced by numbers of as many digits; null stays null.
 */
export function createRedactor(options: RedactOptions = {}): (event: DeliveryEnvelope) => DeliveryEnvelope {
  const key = options.key ?? randomBytes(32);
  const names = new Set([...PERSONAL_FIELDS, ...(options.fields ?? [])]);
  const fake = (value: unknown): unknown => {
    if (typeof value === 'string') return fakeOf(value, key);
    if (typeof value === 'number' && Number.isSafeInteger(value))
      return Number(fakeOf(String(value), key).replace(/^(-?)0+(?=\d)/, '$1') || '0');
    if (Array.isArray(value)) return value.map(fake);
    if (typeof value === 'object' && value !== null)
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fake(v)]));
    return value;
  };
  // Patterns are looked for in `metadata` only: the spec's own strings (ids, dates) are not personal.
  const walk = (value: unknown, inMetadata: boolean): unknown => {
    if (Array.isArray(value)) return value.map((v) => walk(v, inMetadata));
    if (typeof value === 'object' && value !== null)
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => [
          k,
          names.has(k) && v !== null ? fake(v) : walk(v, inMetadata || k === 'metadata'),
        ]),
      );
    if (inMetadata && typeof value === 'string' && (EMAIL.test(value) || isPhone(value)))
      return fakeOf(value, key);
    return value;
  };
  return (event) => ({ ...event, data: walk(event.data, false) as Record<string, unknown> });
}
