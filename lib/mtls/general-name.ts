import { children, oid, type Tlv } from './read-der';

/** GeneralName's CHOICE tags (RFC 5280 §4.2.1.6), as the context tag numbers OpenSSL calls GEN_*. */
export const GENERAL_NAME = {
  otherName: 0,
  rfc822Name: 1,
  dNSName: 2,
  directoryName: 4,
  uri: 6,
  iPAddress: 7,
} as const;

/** One GeneralName: its CHOICE tag number and its contents (a Name's DER for directoryName). */
export interface GeneralName {
  type: number;
  value: Buffer;
  /** otherName's type-id, which decides whether it is an email (SmtpUTF8Mailbox). */
  otherNameType?: string;
}

/** Reads one GeneralName element; a directoryName's value is the Name it wraps, tag and all. */
export function readGeneralName(der: Buffer, node: Tlv): GeneralName {
  const type = node.tag & 0x1f;
  if (type === GENERAL_NAME.directoryName) {
    const [name] = children(der, node);
    if (name === undefined) throw new Error('empty directoryName');
    return { type, value: der.subarray(name.at, name.end) };
  }
  if (type === GENERAL_NAME.otherName) {
    const [id] = children(der, node);
    if (id === undefined) throw new Error('empty otherName');
    return { type, value: der.subarray(node.start, node.end), otherNameType: oid(der, id) };
  }
  return { type, value: der.subarray(node.start, node.end) };
}
