import { deadLetterTopic, topicName } from './catalogue.js';
import type { ConsumedRecord } from './consumer.js';
import type { Producer } from './producer.js';
import { Counter, type Registry } from 'prom-client';

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

/**
 * The producer, counting in `gateway_dead_letters_total{consumer}` each record it sends to the
 * dead-letter topic, by the consumer that gave up on it (`x-dead-consumer`, or the projection).
 */
export function countingDeadLetters(producer: Producer, prefix: string, registry: Registry): Producer {
  const deadLetters = new Counter({
    name: 'gateway_dead_letters_total',
    help: 'Records a consumer gave up on and sent to the dead-letter topic.',
    labelNames: ['consumer'] as const,
    registers: [registry],
  });
  const deadTopic = topicName(deadLetterTopic, prefix);
  return {
    send: (spec, records) => producer.send(spec, records),
    async sendRaw(topic, records) {
      await producer.sendRaw(topic, records);
      if (topic !== deadTopic) return;
      for (const { headers } of records) deadLetters.inc({ consumer: deadConsumer(headers) });
    },
    disconnect: () => producer.disconnect(),
  };
}

function deadConsumer(headers: Readonly<Record<string, string>> | undefined): string {
  const projection = headers?.['x-dead-projection'];
  return headers?.['x-dead-consumer'] ?? (projection === undefined ? 'unknown' : `processor.${projection}`);
}
