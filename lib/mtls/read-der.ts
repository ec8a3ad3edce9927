/** One DER element: its tag byte, where it begins, and where its contents start and end. */
export interface Tlv {
  tag: number;
  at: number;
  start: number;
  end: number;
}

/** One DER tag-length-value at `at`, bounded by `limit`; throws on anything malformed. */
export function tlv(der: Buffer, at: number, limit: number): Tlv {
  if (at + 2 > limit) throw new Error('truncated DER');
  const tag = der[at] as number;
  let length = der[at + 1] as number;
  let start = at + 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    if (bytes === 0 || bytes > 4 || start + bytes > limit) throw new Error('bad DER length');
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + (der[start + i] as number);
    start += bytes;
  }
  const end = start + length;
  if (end > limit) throw new Error('DER runs past its container');
  return { tag, at, start, end };
}

/** The elements inside a constructed one, in order. */
export function children(der: Buffer, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let at = parent.start; at < parent.end;) {
    const child = tlv(der, at, parent.end);
    out.push(child);
    at = child.end;
  }
  return out;
}

/** An OBJECT IDENTIFIER's contents in dotted form. */
export function oid(der: Buffer, node: Tlv): string {
  const arcs: number[] = [];
  let value = 0;
  for (let i = node.start; i < node.end; i++) {
    const byte = der[i] as number;
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) {
      if (arcs.length === 0)
        arcs.push(value < 80 ? Math.floor(value / 40) : 2, value < 80 ? value % 40 : value - 80);
      else arcs.push(value);
      value = 0;
    }
  }
  return arcs.join('.');
}

/** A non-negative INTEGER's value (the contents of one up to 6 bytes long). */
export function unsigned(der: Buffer, node: Tlv): number {
  if (node.end - node.start > 6) throw new Error('INTEGER too large');
  let value = 0;
  for (let i = node.start; i < node.end; i++) value = value * 256 + (der[i] as number);
  return value;
}
