import { Partitioners, type PartitionMetadata } from 'kafkajs';

const defaultPartitioner = Partitioners.DefaultPartitioner();

/**
 * The partition a keyed record lands in, computed exactly as the producer does (kafkajs' default
 * partitioner: Java-compatible murmur2 of the key, modulo the partition count), so a reader can
 * tell which partition holds a key's records without reading the others.
 */
export function partitionOf(key: string, partitions: number): number {
  const partitionMetadata = Array.from(
    { length: partitions },
    (_, partitionId): PartitionMetadata => ({ partitionId, leader: 0, partitionErrorCode: 0, replicas: [0], isr: [0] }),
  );
  return defaultPartitioner({ topic: '', partitionMetadata, message: { key, value: null } });
}
