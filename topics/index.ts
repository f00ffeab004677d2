export { topics, deadLetterTopic, topicName, valueSubject, type TopicSpec, type AnyTopic } from './catalogue.js';
export { createKafka, type KafkaSettings } from './kafka.js';
export { ensureTopics, endOffsets } from './admin.js';
export { TopicSerdes } from './serdes.js';
export { createProducer, type Producer, type OutgoingRecord } from './producer.js';
export { createConsumer, type TopicConsumer, type ConsumedBatch, type ConsumedRecord, type ConsumerOptions, type Decoded } from './consumer.js';
export { GatewayFailure } from './failure.js';
export type { Kafka } from 'kafkajs';
