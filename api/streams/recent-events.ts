import type { StreamedEvent } from './streamed-event.js';

/**
 * The last events of one partition, oldest first, at most `capacity` of them. `floor` is the
 * lowest offset from which every streamable record of the partition is still held: a client
 * resuming at or after it is served from memory.
 */
export class RecentEvents {
  /** Held events are `entries[head..]`; the slots before `head` are dropped ones, cut off now and then. */
  private entries: (StreamedEvent | undefined)[] = [];
  private head = 0;

  constructor(
    private readonly capacity: number,
    private lowest: number,
  ) {}

  get floor(): number {
    return this.lowest;
  }

  push(entry: StreamedEvent): void {
    this.entries.push(entry);
    if (this.entries.length - this.head <= this.capacity) return;
    this.lowest = this.entries[this.head]!.offset + 1;
    this.entries[this.head++] = undefined;
    if (this.head >= Math.max(1_024, this.capacity)) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  /** The held events at or after `offset`, oldest first (a copy: later pushes do not change it). */
  from(offset: number): StreamedEvent[] {
    const held: StreamedEvent[] = [];
    for (let i = this.head; i < this.entries.length; i++) {
      const entry = this.entries[i]!;
      if (entry.offset >= offset) held.push(entry);
    }
    return held;
  }

  /** The newest held event that `matches`. */
  findLast(matches: (entry: StreamedEvent) => boolean): StreamedEvent | undefined {
    for (let i = this.entries.length - 1; i >= this.head; i--) {
      const entry = this.entries[i]!;
      if (matches(entry)) return entry;
    }
    return undefined;
  }
}
