import { describe, expect, it } from 'vitest';
import { loadConfig, redactConfig, refuseSandboxInProduction, withStartInstance } from '../../stack/config.js';

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

  it('refuses a consumer-group session the brokers would refuse or a member could not keep', () => {
    expect(() => loadConfig({ KAFKA_SESSION_TIMEOUT_MS: '999' })).toThrow(/KAFKA_SESSION_TIMEOUT_MS must be between 1000 and 1800000 ms, got 999/);
    expect(() => loadConfig({ KAFKA_SESSION_TIMEOUT_MS: '1800001' })).toThrow(/between 1000 and 1800000 ms/);
    expect(loadConfig({ KAFKA_SESSION_TIMEOUT_MS: '1000' }).kafka.sessionTimeoutMs).toBe(1_000);
  });

  it('takes an instance id the brokers can carry, and none unless set', () => {
    expect(loadConfig({}).kafka.instanceId).toBeUndefined();
    expect(loadConfig({ GATEWAY_INSTANCE_ID: ' dispatcher-0 ' }).kafka.instanceId).toBe('dispatcher-0');
    expect(() => loadConfig({ GATEWAY_INSTANCE_ID: 'web 1' })).toThrow(/GATEWAY_INSTANCE_ID must be 1 to 100 letters, digits/);
    expect(() => loadConfig({ GATEWAY_INSTANCE_ID: 'x'.repeat(101) })).toThrow(/GATEWAY_INSTANCE_ID/);
  });

  it('looks for dead peers every 500 ms unless told another interval, or 0 for never', () => {
    expect(loadConfig({}).kafka.deadMemberCheckMs).toBe(500);
    expect(loadConfig({ KAFKA_DEAD_MEMBER_CHECK_MS: '0' }).kafka.deadMemberCheckMs).toBe(0);
    expect(() => loadConfig({ KAFKA_DEAD_MEMBER_CHECK_MS: '-1' })).toThrow(/KAFKA_DEAD_MEMBER_CHECK_MS must be a non-negative integer/);
  });

  it("runs `gateway start` as a static member named after the host, unless an instance id is set", () => {
    expect(withStartInstance(loadConfig({}), 'dev box.local').kafka.instanceId).toBe('start-dev-box.local');
    expect(withStartInstance(loadConfig({}), 'h'.repeat(200)).kafka.instanceId).toHaveLength(100);
    expect(withStartInstance(loadConfig({ GATEWAY_INSTANCE_ID: 'mine' }), 'host').kafka.instanceId).toBe('mine');
  });

  it('reads the webhook retry delays, and refuses a schedule that cannot work', () => {
    expect(loadConfig({}).webhooks.retryDelaysMs).toEqual([10_000, 60_000, 600_000, 3_600_000, 3_600_000]);
    expect(loadConfig({ WEBHOOK_RETRY_DELAYS: ' 1s, 2s,4s ,1500ms' }).webhooks.retryDelaysMs).toEqual([1_000, 2_000, 4_000, 1_500]);
    const refused = (value: string) => () => loadConfig({ WEBHOOK_RETRY_DELAYS: value });
    expect(refused('10s,,1m')).toThrow(/WEBHOOK_RETRY_DELAYS has an empty entry at position 2/);
    expect(refused('10s,1m,')).toThrow(/empty entry at position 3/);
    expect(refused('10s,0ms')).toThrow(/entry "0ms" is not positive/);
    expect(refused('10s,-1s')).toThrow(/entry "-1s" is not a duration/);
    expect(refused('10s,1d')).toThrow(/entry "1d" is not a duration/);
    expect(refused('1s,1s,1s,1s,1s,1s')).toThrow(/has 6 delays: a webhook is retried at most 5 times/);
  });

  it('runs in production unless told otherwise, where the sandbox providers are refused with what to set', () => {
    expect(loadConfig({}).mode).toBe('production');
    expect(loadConfig({}, { defaultMode: 'development' }).mode).toBe('development');
    expect(loadConfig({ GATEWAY_MODE: 'production' }, { defaultMode: 'development' }).mode).toBe('production');
    expect(loadConfig({ GATEWAY_MODE: ' ' }, { defaultMode: 'development' }).mode).toBe('development');
    expect(() => loadConfig({ GATEWAY_MODE: 'dev' })).toThrow(/GATEWAY_MODE must be development or production, not dev/);

    expect(() => refuseSandboxInProduction(loadConfig({}))).toThrow(/PAYMENT_PROVIDER is sandbox .*; CONNECTOR is sandbox .*set GATEWAY_MODE=development/);
    expect(() => refuseSandboxInProduction(loadConfig({ CONNECTOR: 'baileys' }))).toThrow(/^(?!.*CONNECTOR is).*PAYMENT_PROVIDER is sandbox/);
    const stripe = { PAYMENT_PROVIDER: 'stripe', STRIPE_SECRET_KEY: 'sk', STRIPE_PUBLISHABLE_KEY: 'pk', STRIPE_WEBHOOK_SECRET: 'whsec', STRIPE_PRODUCT: 'prod' };
    expect(() => refuseSandboxInProduction(loadConfig({ ...stripe, CONNECTOR: 'baileys' }))).not.toThrow();
    expect(() => refuseSandboxInProduction(loadConfig({ GATEWAY_MODE: 'development' }))).not.toThrow();
  });

  it('masks credentials before the config is logged', () => {
    const shown = JSON.stringify(redactConfig(loadConfig({ DATABASE_URL: 'postgres://u:hunter2@db/gw', S3_SECRET_ACCESS_KEY: 'topsecret', METRICS_TOKEN: 'scrapetoken' })));
    expect(shown).not.toContain('hunter2');
    expect(shown).not.toContain('topsecret');
    expect(shown).not.toContain('scrapetoken');
  });

  it('reads the WhatsApp Web version override, and refuses one that is not three numbers', () => {
    expect(loadConfig({}).baileys.webVersion).toBeUndefined();
    expect(loadConfig({ BAILEYS_WA_VERSION: '2.3000.1023223821' }).baileys.webVersion).toEqual([2, 3000, 1_023_223_821]);
    expect(() => loadConfig({ BAILEYS_WA_VERSION: '2.3000' })).toThrow(/BAILEYS_WA_VERSION must be a WhatsApp Web version/);
  });
});
