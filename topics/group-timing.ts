import kafkajs, { type Kafka } from 'kafkajs';

const { ConfigResourceTypes } = kafkajs;

/** How every consumer group of the gateway keeps its members: one place, for all three kinds of member. */
export interface GroupTiming {
  /** A member that stops heartbeating (SIGKILL, lost host) loses its partitions after this. */
  readonly sessionTimeout: number;
  /** The least time between two heartbeats; kafkajs sends them between batches and when a handler calls `heartbeat()`. */
  readonly heartbeatInterval: number;
  /** How long a rebalance waits for the members to rejoin; one busy with a batch rejoins when it returns. */
  readonly rebalanceTimeout: number;
}

/**
 * The session wanted: a killed member's partitions move after it (then a rebalance of a few
 * hundred ms). 10 s until shorter sessions are measured under the suite's load: at 6 s, a whole
 * process stalled on the saturated 2-core machine lost every membership at once. Handlers that hold
 * a batch longer heartbeat from inside it (`heartbeating`).
 */
const WANTED_SESSION_MS = 10_000;

/**
 * Members learn of a rebalance from a heartbeat's answer: a short interval lets them rejoin (and a
 * new or dead member's partitions move) sooner. Ten fit in the wanted session.
 */
const HEARTBEAT_MS = 1_000;

/**
 * A member busy with a batch rejoins when it returns; one that takes longer is left out of the
 * group. kafkajs' own default, kept: a dead member never holds a rebalance this long (its session
 * ends first), only a live one's long batch does, and evicting it would replay that batch.
 */
const REBALANCE_MS = 60_000;

/** Kafka's default `group.min.session.timeout.ms`: what a broker that does not say accepts. */
const DEFAULT_BROKER_MIN_SESSION_MS = 6_000;

const known = new WeakMap<Kafka, Promise<GroupTiming>>();

/**
 * The timing for groups on this cluster: the wanted session, or the shortest the brokers accept
 * (`group.min.session.timeout.ms`; a join asking for less is refused). Read once per client.
 */
export function groupTiming(kafka: Kafka): Promise<GroupTiming> {
  let timing = known.get(kafka);
  if (timing === undefined) {
    timing = brokerMinSession(kafka).then(timingFor);
    known.set(kafka, timing);
  }
  return timing;
}

function timingFor(brokerMinSessionMs: number): GroupTiming {
  const sessionTimeout = Math.max(WANTED_SESSION_MS, brokerMinSessionMs);
  return { sessionTimeout, heartbeatInterval: HEARTBEAT_MS, rebalanceTimeout: REBALANCE_MS };
}

async function brokerMinSession(kafka: Kafka): Promise<number> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    const { brokers } = await admin.describeCluster();
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: brokers.map((broker) => ({ type: ConfigResourceTypes.BROKER, name: String(broker.nodeId), configNames: ['group.min.session.timeout.ms'] })),
    });
    const values = resources.flatMap((resource) => resource.configEntries.map((entry) => Number(entry.configValue)));
    const valid = values.filter((value) => Number.isSafeInteger(value) && value > 0);
    return valid.length > 0 ? Math.max(...valid) : DEFAULT_BROKER_MIN_SESSION_MS;
  } catch {
    return DEFAULT_BROKER_MIN_SESSION_MS;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * Runs a batch's handler while heartbeating for it every interval: kafkajs heartbeats only between
 * batches, and a batch that outlasts the session (a replay's large batch, a slow database) would
 * lose the member its partitions. A heartbeat that fails (a rebalance began) is left to the runner,
 * which rejoins once the batch returns.
 */
export async function heartbeating<T>(heartbeat: () => Promise<void>, timing: GroupTiming, work: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => void heartbeat().catch(() => undefined), timing.heartbeatInterval);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
