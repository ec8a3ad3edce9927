import { children, oid, type Tlv } from './read-der';

/** One attribute of a distinguished name: its type, the string's ASN.1 tag and its bytes. */
export interface NameAttribute {
  type: string;
  tag: number;
  bytes: Buffer;
}

export const OID_COMMON_NAME = '2.5.4.3';
export const OID_EMAIL_ADDRESS = '1.2.840.113549.1.9.1';

export const STRING_TAG = {
  utf8: 0x0c,
  numeric: 0x12,
  printable: 0x13,
  t61: 0x14,
  ia5: 0x16,
  universal: 0x1c,
  bmp: 0x1e,
  visible: 0x1a,
} as const;

/** A Name (SEQUENCE OF RDN, each a SET OF attributes) as its RDNs, in order. */
export function readName(der: Buffer, name: Tlv): NameAttribute[][] {
  return children(der, name).map((rdn) =>
    children(der, rdn).map((attribute) => {
      const [type, value] = children(der, attribute);
      if (type === undefined || value === undefined) throw new Error('bad AttributeTypeAndValue');
      return { type: oid(der, type), tag: value.tag, bytes: der.subarray(value.start, value.end) };
    }),
  );
}

/** A string attribute as text, converted as OpenSSL's ASN1_STRING_to_UTF8 does (T61 read as Latin-1). */
export function attributeText({ tag, bytes }: NameAttribute): string {
  switch (tag) {
    case STRING_TAG.utf8:
      return bytes.toString('utf8');
    case STRING_TAG.bmp: {
      let text = '';
      for (let i = 0; i + 1 < bytes.length; i += 2) text += String.fromCharCode(bytes.readUInt16BE(i));
      return text;
    }
    case STRING_TAG.universal: {
      let text = '';
      for (let i = 0; i + 3 < bytes.length; i += 4)
        text += String.fromCodePoint(bytes.readUInt32BE(i) & 0x10ffff);
      return text;
    }
    default:
      return bytes.toString('latin1');
  }
}

const CANONICAL_TAGS = new Set<number>([
  STRING_TAG.utf8,
  STRING_TAG.bmp,
  STRING_TAG.universal,
  STRING_TAG.printable,
  STRING_TAG.t61,
  STRING_TAG.ia5,
  STRING_TAG.visible,
]);

/**
 * An RDN as OpenSSL compares it in a directoryName constraint (x_name.c's canonical encoding): each
 * text value trimmed, its inner whitespace runs made one space and its ASCII lowercased; other types
 * kept as they are; the attributes in a fixed order, since an RDN is a set.
 */
export function canonicalRdn(rdn: readonly NameAttribute[]): string {
  return rdn
    .map((attribute) => {
      if (!CANONICAL_TAGS.has(attribute.tag))
        return `${attribute.type}=${attribute.tag}:${attribute.bytes.toString('hex')}`;
      const text = attributeText(attribute)
        .replace(/^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g, '')
        .replace(/[ \t\n\v\f\r]+/g, ' ')
        .replace(/[A-Z]/g, (letter) => letter.toLowerCase());
      return `${attribute.type}=u:${JSON.stringify(text)}`;
    })
    .sort()
    .join('+');
}
