import { afterAll, describe, expect, it } from 'vitest';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { currentTopicSchemas, releasedVersions } from '../../topics/schema-history.js';
import { request } from 'undici';
import { composeSchema, loadSchemaFiles, type NamedSchema } from '../../schemas/load.js';
import { AvroSerdes } from '../../schemas/serde.js';
import type { InstanceState } from '../../schemas/records.js';
import { asAccountId, asEventId, asInstanceId, asProjectId } from '../../schemas/ids.js';
import { loadConfig } from '../../stack/config.js';
import { deleteSubject } from '../../topics/index.js';

const config = loadConfig();
const run = `t${Date.now().toString(36)}`;
const raced = Array.from({ length: 12 }, (_, i) => `raced${i}`);

describe('schemas on a fresh registry', () => {
  const registry = new SchemaRegistry({ host: config.schemaRegistryUrl });
  const named = loadSchemaFiles();
  const evolved = new Map<string, NamedSchema>(named);
  const base = named.get('gateway.instances.InstanceState')!;
  evolved.set(base.fullName, {
    ...base,
    json: {
      ...base.json,
      fields: [...(base.json.fields as unknown[]), { name: 'region', type: 'string', default: 'unknown', doc: 'test field' }],
    },
  });

  afterAll(async () => {
    const subjects = [...currentTopicSchemas(named).keys()].map((topic) => `${run}.${topic}-value`);
    const others = ['incompatible', 'evolution', 'encoded', 'interrupted', 'chosen', ...raced].map((name) => `${run}.${name}-value`);
    for (const subject of [...subjects, ...others]) await deleteSubject(config.schemaRegistryUrl, subject);
  });

  it('accepts every released version of every topic schema, then the current one, under BACKWARD', async () => {
    for (const [topic, current] of currentTopicSchemas(named)) {
      const subject = `${run}.${topic}-value`;
      const ids: number[] = [];
      for (const version of [...releasedVersions(topic), current]) {
        const { id } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(version) }, { subject });
        ids.push(id);
      }
      // The current schema is the last released one, so the registry knows it already.
      expect(ids[ids.length - 1]).toBe(ids[ids.length - 2]);
    }
  });

  it('rejects a change that would break readers of older records', async () => {
    const subject = `${run}.incompatible-value`;
    const current = currentTopicSchemas(named).get('gw.instances') as { fields: unknown[] };
    await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(current) }, { subject });
    const breaking = { ...current, fields: [...current.fields, { name: 'region', type: 'string' }] };
    await expect(
      registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(breaking) }, { subject }),
    ).rejects.toThrow(/incompatible|409|compatib/i);
  });

  describe('a record written with an older version', () => {
    const subject = `${run}.evolution-value`;
    const state: InstanceState = {
      event_id: asEventId('evt_1'),
      occurred_at: 1_767_225_600_000,
      account_id: asAccountId('acc_1'),
      project_id: asProjectId('prj_1'),
      instance_id: asInstanceId('inst_1'),
      phone: '+5511900000000',
      nickname: 'Sales',
      status: 'connected',
      previous_status: 'connecting',
      reason: null,
      health_score: 100,
      pool_ids: ['pool_1'],
      connector: 'sandbox',
      deleted: false,
    };

    it('is still read, with defaults filled in, after a compatible change', async () => {
      const v1 = await new AvroSerdes(config.schemaRegistryUrl, named).register<InstanceState>(subject, base.fullName);
      const bytes = v1.encode(state);
      const v2 = await new AvroSerdes(config.schemaRegistryUrl, evolved).register<InstanceState & { region: string }>(subject, base.fullName);
      expect(v2.schemaId).not.toBe(v1.schemaId);
      expect(await v2.decode(bytes)).toEqual({ ...state, region: 'unknown' });
      expect(await v1.decode(v2.encode({ ...state, region: 'eu' }))).toEqual(state);
    });
  });

  describe('records encoded one after another', () => {
    const subject = `${run}.encoded-value`;
    const stateOf = (n: number): InstanceState => ({
      event_id: asEventId(`evt_${n}`),
      occurred_at: 1_767_225_600_000 + n,
      account_id: asAccountId('acc_1'),
      project_id: asProjectId('prj_1'),
      instance_id: asInstanceId(`inst_${n}`),
      phone: '+5511900000000',
      // Sizes from a few bytes to past the encoder's 64 KiB slab, so that records straddle slabs.
      nickname: n === 700 ? 'x'.repeat(100_000) : 'n'.repeat((n * 37) % 900),
      status: 'connected',
      previous_status: null,
      reason: null,
      health_score: n % 101,
      pool_ids: [],
      connector: 'sandbox',
      deleted: false,
    });

    it('each keep their own bytes, and decode to their own value', async () => {
      const serde = await new AvroSerdes(config.schemaRegistryUrl, named).register<InstanceState>(subject, base.fullName);
      const encoded = Array.from({ length: 2_000 }, (_, n) => serde.encode(stateOf(n)));
      const copies = encoded.map((bytes) => Buffer.from(bytes));
      for (let n = 0; n < encoded.length; n++) {
        expect(encoded[n]!.equals(copies[n]!)).toBe(true);
        expect(serde.decode(encoded[n]!)).toEqual(stateOf(n));
      }
    });

    it('refuses bytes cut short or followed by more', async () => {
      const serde = await new AvroSerdes(config.schemaRegistryUrl, named).register<InstanceState>(subject, base.fullName);
      const bytes = serde.encode(stateOf(3));
      expect(() => serde.decode(bytes.subarray(0, bytes.length - 1))).toThrow(/cannot decode .* truncated/);
      expect(() => serde.decode(Buffer.concat([bytes, Buffer.from([0])]))).toThrow(/cannot decode .* 1 bytes of trailing data/);
    });
  });

  it('registers a new subject from processes starting at once, each with the same id', async () => {
    // Two role processes started together on a new cluster: both found the subject without a level
    // and both set it; the registry refused the second (409, the rule exists) and that process exited.
    for (const name of raced) {
      const subject = `${run}.${name}-value`;
      const registered = await Promise.all([1, 2, 3, 4, 5].map(() => new AvroSerdes(config.schemaRegistryUrl, named).register<InstanceState>(subject, base.fullName)));
      expect(new Set(registered.map((serde) => serde.schemaId)).size, subject).toBe(1);
      const response = await request(`${config.schemaRegistryUrl}/config/${encodeURIComponent(subject)}`);
      expect(((await response.body.json()) as { compatibilityLevel: string }).compatibilityLevel, subject).toBe('BACKWARD');
    }
  });

  describe('a subject whose first registration was cut short', () => {
    /** What the registry holds when a process stopped between the client's two requests: a first version, no level of its own. */
    const firstVersionOnly = async (subject: string) => {
      const schema = composeSchema(base.fullName, named);
      const response = await request(`${config.schemaRegistryUrl}/subjects/${encodeURIComponent(subject)}/versions`, {
        method: 'POST',
        headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
        body: JSON.stringify({ schema: JSON.stringify(schema) }),
      });
      expect(response.statusCode, await response.body.text()).toBe(200);
    };
    const level = async (subject: string) => {
      const response = await request(`${config.schemaRegistryUrl}/config/${encodeURIComponent(subject)}`);
      return ((await response.body.json()) as { compatibilityLevel: string }).compatibilityLevel;
    };

    it('is read at the next start, and its next version registered under BACKWARD', async () => {
      const subject = `${run}.interrupted-value`;
      await firstVersionOnly(subject);
      const first = await new AvroSerdes(config.schemaRegistryUrl, named).register<InstanceState>(subject, base.fullName);
      const next = await new AvroSerdes(config.schemaRegistryUrl, evolved).register<InstanceState>(subject, base.fullName);
      expect(next.schemaId).not.toBe(first.schemaId);
      expect(await level(subject)).toBe('BACKWARD');
    });

    it('keeps refusing a level an operator chose', async () => {
      const subject = `${run}.chosen-value`;
      await firstVersionOnly(subject);
      const set = await request(`${config.schemaRegistryUrl}/config/${encodeURIComponent(subject)}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
        body: JSON.stringify({ compatibility: 'FULL' }),
      });
      expect(set.statusCode, await set.body.text()).toBe(200);
      await expect(new AvroSerdes(config.schemaRegistryUrl, evolved).register(subject, base.fullName)).rejects.toThrow(/BACKWARD != FULL/);
      expect(await level(subject)).toBe('FULL');
    });
  });
});
