/** How every consumer group of the gateway keeps its members: one place, for all three kinds of member. */
export interface GroupTiming {
  /** A member that stops heartbeating (SIGKILL, lost host) loses its partitions after this. */
  readonly sessionTimeout: number;
  /** The least time between two heartbeats; kafkajs sends them between batches and, here, while a batch runs (`heartbeating`). */
  readonly heartbeatInterval: number;
  /** How long a rebalance waits for the members to rejoin; one busy with a batch rejoins when it returns. */
  readonly rebalanceTimeout: number;
}

/**
 * - Session: a killed member's partitions move after it (then a rebalance of a few hundred ms).
 *   10 s until shorter sessions are measured under the suite's load: at 6 s, a whole process
 *   stalled on the saturated 2-core machine lost every membership at once. A session under the
 *   brokers' `group.min.session.timeout.ms` (Kafka's default 6 s) is refused at join.
 * - Heartbeat: members learn of a rebalance from a heartbeat's answer; ten fit in the session.
 * - Rebalance: kafkajs' own default, kept. A dead member never holds a rebalance this long (its
 *   session ends first), only a live one's long batch does, and evicting it would replay that batch.
 */
export const GROUP_TIMING: GroupTiming = { sessionTimeout: 10_000, heartbeatInterval: 1_000, rebalanceTimeout: 60_000 };

/**
 * Runs a batch's handler while heartbeating for it every interval: kafkajs heartbeats only between
 * batches, and a batch that outlasts the session (a replay's large batch, a slow database) would
 * lose the member its partitions. A heartbeat that fails (a rebalance began) is left to the runner,
 * which rejoins once the batch returns.
 */
export async function heartbeating<T>(heartbeat: () => Promise<void>, work: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => void heartbeat().catch(() => undefined), GROUP_TIMING.heartbeatInterval);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
