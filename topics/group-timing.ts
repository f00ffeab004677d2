/** How every consumer group of the gateway keeps its members: one place, for all three kinds of member. */
export interface GroupTiming {
  /** A member that stops heartbeating (SIGKILL, lost host) loses its partitions after this. */
  readonly sessionTimeout: number;
  /** The least time between two heartbeats; kafkajs sends them between batches and, here, while a batch runs (`heartbeating`). */
  readonly heartbeatInterval: number;
  /** How long a rebalance waits for the members to rejoin; one busy with a batch rejoins when it returns. */
  readonly rebalanceTimeout: number;
  /** How long an idle member's fetch waits on the broker for records; data ends it at once. */
  readonly maxWaitTimeInMs: number;
}

/** `KAFKA_SESSION_TIMEOUT_MS` unless set: see `groupTiming`. */
export const DEFAULT_SESSION_TIMEOUT_MS = 10_000;

/**
 * - Session: a killed member's partitions move after it (then a rebalance of a few hundred ms).
 *   10 s unless configured: on a saturated 2-core machine a whole process stalled for 6 s and lost
 *   every membership at once; `bench:failover` measures shorter ones (docs/operations.md). A
 *   session under the brokers' `group.min.session.timeout.ms` (Kafka's default 6 s) is refused at join.
 * - Heartbeat: members learn of a rebalance from a heartbeat's answer (a dead member removed by its
 *   peers, a new member joining), so twenty fit in the session: at 10 s, every 500 ms.
 * - Rebalance: kafkajs' own default, kept. A dead member never holds a rebalance this long (its
 *   session ends first), only a live one's long batch does, and evicting it would replay that batch.
 * - Fetch wait: an idle member heartbeats after each empty fetch, so a fetch waits at most one
 *   heartbeat interval, and at most 500 ms (the Java client's default): records end a fetch as soon
 *   as they come, so the wait costs no latency, and every idle poll costs the member and the broker
 *   CPU (a processor runs about twenty groups: at 100 ms they took a fifth of a core doing nothing).
 */
export function groupTiming(sessionTimeout = DEFAULT_SESSION_TIMEOUT_MS): GroupTiming {
  const heartbeatInterval = Math.max(100, Math.round(sessionTimeout / 20));
  return { sessionTimeout, heartbeatInterval, rebalanceTimeout: 60_000, maxWaitTimeInMs: Math.min(500, heartbeatInterval) };
}

/** How often a running batch offers a heartbeat; kafkajs sends one only once its heartbeat interval has passed. */
const HEARTBEAT_TICK_MS = 100;

/**
 * Runs a batch's handler while heartbeating for it: kafkajs heartbeats only between batches, and a
 * batch that outlasts the session (a replay's large batch, a slow database) would lose the member
 * its partitions. A heartbeat that fails (a rebalance began) is left to the runner, which rejoins
 * once the batch returns.
 */
export async function heartbeating<T>(heartbeat: () => Promise<void>, work: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => void heartbeat().catch(() => undefined), HEARTBEAT_TICK_MS);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
