/**
 * Where a stream stands in each partition of `gw.events` it reads: the next offset to read there.
 * Written as `partition-offset` pairs joined by dots, lowest partition first (`2-88.7-345`); it is
 * the SSE event id, opaque to clients.
 */
export type Cursor = ReadonlyMap<number, number>;

const PAIR = /^(\d{1,5})-(\d{1,16})$/;

export function formatCursor(cursor: Cursor): string {
  return [...cursor]
    .sort(([a], [b]) => a - b)
    .map(([partition, offset]) => `${partition}-${offset}`)
    .join('.');
}

/** The cursor a client sent back, or undefined when the text is not one (or names a partition twice). */
export function parseCursor(text: string): Cursor | undefined {
  const cursor = new Map<number, number>();
  for (const pair of text.trim().split('.')) {
    const match = PAIR.exec(pair);
    if (!match) return undefined;
    const partition = Number(match[1]);
    const offset = Number(match[2]);
    if (!Number.isSafeInteger(offset) || cursor.has(partition)) return undefined;
    cursor.set(partition, offset);
  }
  return cursor;
}

/** Whether a cursor names exactly the partitions a stream reads. */
export function coversPartitions(cursor: Cursor, partitions: readonly number[]): boolean {
  return cursor.size === partitions.length && partitions.every((partition) => cursor.has(partition));
}
