import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The console request signature of spec 5.1: HMAC-SHA256, keyed with the account secret, over the
 * single-line base64 of the exact payload text (`{}` when empty), as lowercase hex.
 */
export function signPayload(payloadText: string, secretKey: string): string {
  const base64 = Buffer.from(payloadText === '' ? '{}' : payloadText, 'utf8').toString('base64');
  return createHmac('sha256', secretKey).update(base64).digest('hex');
}

const HEX_SIGNATURE = /^[0-9a-f]{64}$/;

/** Checks a presented signature in constant time; anything not 64 lowercase hex digits is wrong. */
export function verifyPayloadSignature(
  payloadText: string,
  secretKey: string,
  signature: string | undefined,
): boolean {
  if (signature === undefined || !HEX_SIGNATURE.test(signature)) return false;
  return timingSafeEqual(
    Buffer.from(signPayload(payloadText, secretKey), 'hex'),
    Buffer.from(signature, 'hex'),
  );
}
