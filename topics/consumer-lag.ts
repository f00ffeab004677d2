import type { Admin, Kafka } from 'kafkajs';
import { Gauge, type Registry } from 'prom-client';

/** The consumer groups this process has a connected member in. */
export class RunningGroups {
  private readonly members = new Map<string, number>();

  joined(groupId: string): void {
    this.members.set(groupId, (this.members.get(groupId) ?? 0) + 1);
  }

  left(groupId: string): void {
    const count = (this.members.get(groupId) ?? 0) - 1;
    if (count > 0) this.members.set(groupId, count);
    else this.members.delete(groupId);
  }

  list(): string[] {
    return [...this.members.keys()];
  }
}

export interface ConsumerLagOptions {
  readonly kafka: Kafka;
  readonly groups: RunningGroups;
  readonly registry: Registry;
  readonly onError: (error: unknown) => void;
}

/**
 * `gateway_consumer_lag{group,topic,partition}`: records not yet committed by each group this
 * process runs, read from the brokers at each scrape (high watermark minus committed offset), so a
 * stuck consumer shows a growing lag even though it fetches nothing. Partitions a group never
 * committed on (groups of one process that commit nothing, such as the in-memory directory's) are
 * left out. Returns a function that closes the admin connection.
 */
export function registerConsumerLag({ kafka, groups, registry, onError }: ConsumerLagOptions): () => Promise<void> {
  let admin: Promise<Admin> | undefined;
  const connected = () => (admin ??= connect(kafka));
  new Gauge({
    name: 'gateway_consumer_lag',
    help: 'Records on a partition after the offset its consumer group committed (high watermark minus committed offset).',
    labelNames: ['group', 'topic', 'partition'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const running = groups.list();
      if (running.length === 0) return;
      try {
        for (const lag of await readLag(await connected(), running)) this.set({ group: lag.group, topic: lag.topic, partition: String(lag.partition) }, lag.lag);
      } catch (error) {
        onError(error);
      }
    },
  });
  return async () => {
    if (admin) await (await admin).disconnect();
  };
}

async function connect(kafka: Kafka): Promise<Admin> {
  const admin = kafka.admin();
  await admin.connect();
  return admin;
}

interface PartitionLag {
  readonly group: string;
  readonly topic: string;
  readonly partition: number;
  readonly lag: number;
}

async function readLag(admin: Admin, groups: readonly string[]): Promise<PartitionLag[]> {
  const highs = new Map<string, Promise<Map<number, number>>>();
  const highOf = (topic: string) => {
    let high = highs.get(topic);
    if (!high) {
      high = admin.fetchTopicOffsets(topic).then((offsets) => new Map(offsets.map((o) => [o.partition, Number(o.high)])));
      highs.set(topic, high);
    }
    return high;
  };
  const lags: PartitionLag[] = [];
  for (const group of groups) {
    for (const { topic, partitions } of await admin.fetchOffsets({ groupId: group })) {
      const high = await highOf(topic);
      for (const { partition, offset } of partitions) {
        const committed = Number(offset);
        const end = high.get(partition);
        if (committed < 0 || end === undefined) continue;
        lags.push({ group, topic, partition, lag: Math.max(0, end - committed) });
      }
    }
  }
  return lags;
}
