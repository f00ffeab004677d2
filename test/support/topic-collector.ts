import type { Clients } from '../../stack/clients.js';
import { createConsumer, type TopicConsumer, type TopicSpec } from '../../topics/index.js';

/** Every decodable value of a topic from its beginning, gathered into `values` as they arrive. */
export async function collectTopic<V>(clients: Clients, spec: TopicSpec<V>, groupId: string): Promise<{ values: V[]; consumer: TopicConsumer }> {
  const values: V[] = [];
  const consumer = await createConsumer(clients.kafka, clients.serdes, { groupId, topics: [spec], fromBeginning: true });
  await consumer.run(async (batch) => {
    for (const record of batch.records) if (record.decoded.ok && record.decoded.value !== null) values.push(record.decoded.value as V);
    batch.resolve(batch.records[batch.records.length - 1]!.offset);
  });
  return { values, consumer };
}
