import { watermarks, type Kafka } from '../../topics/index.js';

export interface ReplayResult {
  readonly projection: string;
  readonly records: number;
  readonly durationMs: number;
  /** Of `durationMs`, the time under the lock once caught up: derived tables, merges and the rename. */
  readonly swapMs: number;
  /** Records applied by the replaying process and by the other members of its group (`ReplayMembers`), when there were any. */
  readonly applied?: { readonly here: number; readonly elsewhere: number };
  /** What the log no longer held, which the rebuilt projection lacks (replayed with `allowGaps`). */
  readonly gaps: readonly LogGap[];
}

/** Records of an input partition that retention has deleted: offsets `0` to `firstHeld - 1`. */
export interface LogGap {
  readonly topic: string;
  readonly partition: number;
  readonly firstHeld: number;
}

/** What one projection's replay would lack. */
export interface ProjectionGaps {
  readonly projection: string;
  readonly gaps: readonly LogGap[];
}

/** A replay refused because its inputs no longer start at offset zero; the message says what would be lost. */
export class LogGapsError extends Error {
  override readonly name = 'LogGapsError';
  /** The projections refused, comma-separated. */
  readonly projection: string;
  readonly gaps: readonly LogGap[];

  constructor(readonly refused: readonly ProjectionGaps[]) {
    super(
      `${refused
        .map(
          ({ projection, gaps }) =>
            `replaying ${projection} would lose what the log no longer holds: ${gaps
              .map((g) => `${g.topic} partition ${g.partition} records 0-${g.firstHeld - 1}`)
              .join(', ')}`,
        )
        .join('; ')}; replay anyway with --allow-gaps`,
    );
    this.projection = refused.map((r) => r.projection).join(', ');
    this.gaps = refused.flatMap((r) => r.gaps);
  }
}

/** The partitions of `topics` whose first records are gone. */
export async function logGaps(kafka: Kafka, topics: readonly string[]): Promise<LogGap[]> {
  const gaps: LogGap[] = [];
  for (const topic of topics) {
    for (const [partition, { low }] of await watermarks(kafka, topic)) if (low > 0) gaps.push({ topic, partition, firstHeld: low });
  }
  return gaps;
}

