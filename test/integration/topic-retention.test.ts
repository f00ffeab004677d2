import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import kafkajs from 'kafkajs';
import { createKafka, ensureTopics, topicName, type Kafka } from '../../topics/index.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * Starting a version whose catalogue keeps a topic longer raises the retention of the topic as
 * it exists; one that keeps it less, or an operator's longer setting, never lowers it. The other
 * settings of the topic stay.
 */
describe('ensureTopics: retention raised to the catalogue\'s, never lowered', () => {
  let env: TestEnv;
  let kafka: Kafka;
  const options = () => ({ prefix: env.config.kafka.topicPrefix, replicationFactor: 1 });
  const shape = (retentionMs?: number) => ({ name: 'retention.probe', partitions: 1, cleanup: 'delete' as const, timestamps: 'append' as const, retentionMs });

  beforeAll(async () => {
    env = await createTestEnv();
    kafka = createKafka({ brokers: env.config.kafka.brokers, clientId: `${env.id}-retention` }, pino({ level: 'silent' }));
  });

  afterAll(async () => {
    await env?.dispose();
  });

  async function settings(): Promise<Record<string, string>> {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const { resources } = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: topicName(shape(), env.config.kafka.topicPrefix) }],
      });
      return Object.fromEntries(resources[0]!.configEntries.map((e) => [e.configName, e.configValue]));
    } finally {
      await admin.disconnect();
    }
  }

  /**
   * The topic's settings once its retention reads `retentionMs`: the broker applies a change from
   * the controller's log a moment after the change is acknowledged, later still on a busy machine.
   */
  const settled = (retentionMs: string) => waitFor(`retention.ms ${retentionMs}`, async () => {
    const current = await settings();
    return current['retention.ms'] === retentionMs && current;
  });

  it('raises a shorter retention, keeps a longer one, and keeps the topic\'s other settings', async () => {
    await ensureTopics(kafka, [shape(HOUR)], options());
    expect(await settled(String(HOUR))).toMatchObject({ 'message.timestamp.type': 'LogAppendTime' });

    await ensureTopics(kafka, [shape(DAY)], options());
    expect(await settled(String(DAY))).toMatchObject({ 'message.timestamp.type': 'LogAppendTime' });

    // A catalogue that keeps less does not shorten what is kept.
    await ensureTopics(kafka, [shape(HOUR)], options());
    expect((await settings())['retention.ms']).toBe(String(DAY));

    // For ever (no retention in the catalogue) is the longest.
    await ensureTopics(kafka, [shape()], options());
    expect(await settled('-1')).toMatchObject({ 'message.timestamp.type': 'LogAppendTime' });
    await ensureTopics(kafka, [shape(30 * DAY)], options());
    expect((await settings())['retention.ms']).toBe('-1');
  });
});
