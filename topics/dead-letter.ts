import { deadLetterTopic, topicName } from './catalogue.js';
import type { ConsumedRecord } from './consumer.js';
import type { Producer } from './producer.js';

/**
 * Sends a record that can never be applied to `gw.processors.dead` with its original bytes and
 * headers, plus `x-dead-*` headers naming who gave up on it (`by`), where it sat, and why.
 */
export function sendToDeadLetters(
  producer: Producer,
  prefix: string,
  record: ConsumedRecord<unknown>,
  by: Readonly<Record<string, string>>,
  reason: string,
): Promise<void> {
  return producer.sendRaw(topicName(deadLetterTopic, prefix), [
    {
      key: record.key,
      value: record.raw,
      headers: {
        ...record.headers,
        ...by,
        'x-dead-topic': record.topic,
        'x-dead-partition': String(record.partition),
        'x-dead-offset': String(record.offset),
        'x-dead-error': reason.slice(0, 500),
      },
    },
  ]);
}
