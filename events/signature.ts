import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Headers of a delivered event (spec 6.3). */
export const SIGNATURE_HEADER = 'x-service-signature';
export const EVENT_ID_HEADER = 'x-service-event-id';
export const EVENT_TYPE_HEADER = 'x-service-event-type';

/** `sha256=<hex>`: HMAC-SHA256 of the raw body with the webhook's secret, lower-case hex. */
export function sign(secret: string, rawBody: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}

/**
 * What a receiver does before parsing: recompute the signature over the raw bytes and compare in
 * constant time. A header of the wrong length or shape is simply not valid.
 */
export function verify(secret: string, rawBody: string | Buffer, header: string | undefined): boolean {
  if (header === undefined) return false;
  const expected = Buffer.from(sign(secret, rawBody), 'utf8');
  const given = Buffer.from(header.trim(), 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The headers of one delivery, exactly as production sends them. */
export function deliveryHeaders(secret: string, rawBody: string, event: { event_id: string; event_type: string }): Record<string, string> {
  return {
    'content-type': 'application/json',
    [SIGNATURE_HEADER]: sign(secret, rawBody),
    [EVENT_ID_HEADER]: event.event_id,
    [EVENT_TYPE_HEADER]: event.event_type,
  };
}

/** A new signing secret (spec 2.8: an opaque string), shown once. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
