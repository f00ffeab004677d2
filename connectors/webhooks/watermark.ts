interface Marks {
  /** Offsets taken in and not settled yet, in ascending order (a Map keeps insertion order). */
  readonly open: Map<number, true>;
  /** The highest offset taken in. */
  highest: number;
  /** The last position committed to the group. */
  committed: number;
}

export interface Position {
  readonly topic: string;
  readonly partition: number;
  /** The next offset to read: everything below it is settled. */
  readonly next: number;
}

/**
 * Per-partition commit positions for records settled out of order. Records are taken in as they
 * are fetched and settled when their deliveries are done (delivered, or handed to a retry or dead
 * topic); the committable position of a partition is its lowest open offset, so a crash redelivers
 * exactly what was not settled.
 */
export class Watermarks {
  private readonly partitions = new Map<string, Marks>();

  /**
   * Takes in a fetched record. False when this process has already taken it in (the partition was
   * fetched again from an older committed position after a rebalance): it is in flight or done.
   */
  take(topic: string, partition: number, offset: number): boolean {
    const marks = this.marks(topic, partition);
    if (offset <= marks.highest) return false;
    marks.highest = offset;
    marks.open.set(offset, true);
    return true;
  }

  settle(topic: string, partition: number, offset: number): void {
    this.partitions.get(key(topic, partition))?.open.delete(offset);
  }

  /** Positions that moved past what was last committed. */
  advanced(): Position[] {
    const moved: Position[] = [];
    for (const [name, marks] of this.partitions) {
      const lowestOpen = marks.open.keys().next();
      const next = lowestOpen.done === true ? marks.highest + 1 : lowestOpen.value;
      if (next <= marks.committed) continue;
      const split = name.lastIndexOf(':');
      moved.push({ topic: name.slice(0, split), partition: Number(name.slice(split + 1)), next });
    }
    return moved;
  }

  /** Records that a position was committed to the group. */
  committed(position: Position): void {
    const marks = this.partitions.get(key(position.topic, position.partition));
    if (marks !== undefined && position.next > marks.committed) marks.committed = position.next;
  }

  /** Records taken in and not settled, across partitions. */
  openCount(): number {
    let count = 0;
    for (const marks of this.partitions.values()) count += marks.open.size;
    return count;
  }

  private marks(topic: string, partition: number): Marks {
    const name = key(topic, partition);
    let marks = this.partitions.get(name);
    if (marks === undefined) {
      marks = { open: new Map(), highest: -1, committed: -1 };
      this.partitions.set(name, marks);
    }
    return marks;
  }
}

const key = (topic: string, partition: number) => `${topic}:${partition}`;
