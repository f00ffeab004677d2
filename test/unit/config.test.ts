import { describe, expect, it } from 'vitest';
import { loadConfig, redactConfig } from '../../stack/config.js';

describe('configuration', () => {
  it('works with no variable set, pointing at the local stack', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.kafka.brokers).toEqual(['127.0.0.1:9092']);
    expect(config.schemaRegistryUrl).toBe('http://127.0.0.1:8081/apis/ccompat/v7');
    expect(config.clickhouse.kind).toBe('embedded');
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads every external address from the environment', () => {
    const config = loadConfig({
      PORT: '8080',
      KAFKA_BROKERS: 'k1:9092, k2:9092',
      SCHEMA_REGISTRY_URL: 'https://registry.example/ccompat',
      DATABASE_URL: 'postgres://u:p@db/gw',
      CLICKHOUSE_URL: 'https://ch.example:8443',
      S3_ENDPOINT: 'https://s3.example',
      SMTP_URL: 'smtps://u:p@mail.example',
    });
    expect(config.port).toBe(8080);
    expect(config.kafka.brokers).toEqual(['k1:9092', 'k2:9092']);
    expect(config.clickhouse).toEqual({ kind: 'server', url: 'https://ch.example:8443' });
    expect(config.s3.endpoint).toBe('https://s3.example');
    expect(config.smtpUrl).toBe('smtps://u:p@mail.example');
  });

  it('refuses a port that is not a number', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT must be a non-negative integer/);
  });

  it('masks credentials before the config is logged', () => {
    const shown = JSON.stringify(redactConfig(loadConfig({ DATABASE_URL: 'postgres://u:hunter2@db/gw', S3_SECRET_ACCESS_KEY: 'topsecret' })));
    expect(shown).not.toContain('hunter2');
    expect(shown).not.toContain('topsecret');
  });
});
