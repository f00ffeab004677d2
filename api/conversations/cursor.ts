import { Type } from '@sinclair/typebox';
import { gatewayError } from '../errors.js';

/** Where a page ends in a list sorted by (time, id), newest first. */
export interface PageKey {
  readonly at: Date;
  readonly id: string;
}

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

export const Limit = Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Items per page' });
export const Cursor = Type.String({ maxLength: 512, description: 'next_cursor of the previous page' });
export const NextCursor = Type.Union([Type.String(), Type.Null()], { description: 'Cursor of the next page; null on the last page' });

/** An opaque cursor: base64url of the sort key of the last item of a page. */
export function encodeCursor(key: PageKey): string {
  return Buffer.from(JSON.stringify([key.at.toISOString(), key.id])).toString('base64url');
}

export function decodeCursor(cursor: string): PageKey {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    key = undefined;
  }
  if (Array.isArray(key) && key.length === 2 && typeof key[0] === 'string' && typeof key[1] === 'string') {
    const at = new Date(key[0]);
    if (!Number.isNaN(at.getTime())) return { at, id: key[1] };
  }
  throw gatewayError('invalid_request', { detail: 'cursor is not one this list returned' });
}

/**
 * A page from rows fetched with one more than the limit: the extra row only tells that another
 * page follows.
 */
export function paginate<R>(rows: readonly R[], limit: number, keyOf: (row: R) => PageKey): { items: R[]; next_cursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, next_cursor: rows.length > limit && last !== undefined ? encodeCursor(keyOf(last)) : null };
}
