import { readFileSync } from 'node:fs';
import path from 'node:path';
import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { generateRecordTypes } from '../../schemas/codegen.js';
import { currentTopicSchemas, releasedVersions } from '../../topics/schema-history.js';
import { composeSchema, loadSchemaFiles, schemasDir, unionKinds } from '../../schemas/load.js';
import { compileUnionCodec } from '../../schemas/unions.js';
import { topics } from '../../topics/catalogue.js';
import type { SendCommand } from '../../schemas/records.js';

const named = loadSchemaFiles();

describe('the record catalogue', () => {
  it('composes every topic value schema into one that avsc parses', () => {
    for (const spec of Object.values(topics)) {
      const type = avro.Type.forSchema(composeSchema(spec.schema, named) as avro.Schema);
      expect(type.name).toBe(spec.schema);
    }
  });

  it('keeps schemas/records.ts in step with the .avsc files (npm run schemas:generate)', () => {
    const onDisk = readFileSync(path.join(schemasDir, 'records.ts'), 'utf8');
    expect(onDisk).toBe(generateRecordTypes(named));
  });

  it('has released the current schema of every topic (npm run schemas:snapshot)', () => {
    for (const [topic, schema] of currentTopicSchemas(named)) {
      const versions = releasedVersions(topic);
      expect(versions.length, `${topic} has no released version`).toBeGreaterThan(0);
      expect(versions[versions.length - 1], `${topic} changed since its last release`).toEqual(schema);
    }
  });

  it('refuses a reference to a type that is not defined in schemas/', () => {
    const broken = new Map(named);
    broken.set('gateway.test.Broken', {
      fullName: 'gateway.test.Broken',
      file: 'memory',
      json: { type: 'record', name: 'Broken', namespace: 'gateway.test', fields: [{ name: 'x', type: 'gateway.test.Missing' }] },
    });
    expect(() => avro.Type.forSchema(composeSchema('gateway.test.Broken', broken) as avro.Schema)).toThrow(/Missing/);
  });
});

describe('discriminated unions', () => {
  const type = avro.Type.forSchema(composeSchema(topics.sendCommands.schema, named) as avro.Schema);
  const codec = compileUnionCodec(type, unionKinds(named));

  it('turns a {kind} union into the wrapped Avro form and back', () => {
    const content = { kind: 'location', latitude: -23.55, longitude: -46.63, name: 'Sé', address: null };
    const wire = codec.toWire({ content }) as { content: Record<string, unknown> };
    expect(Object.keys(wire.content)).toEqual(['gateway.messages.LocationContent']);
    expect(codec.fromWire(wire)).toEqual({ content });
  });

  it('round-trips a send command through Avro bytes', () => {
    const sample = codec.fromWire(type.random()) as SendCommand;
    const bytes = type.toBuffer(codec.toWire(sample));
    expect(codec.fromWire(type.fromBuffer(bytes))).toEqual(sample);
  });

  it('keeps the kind of a union of one record, which avsc unwraps, in code and off the wire', () => {
    // A record holding a union of one record (the first NumberQuery had one: check_phones).
    const holder = { type: 'record', name: 'OneQuery', namespace: 'test', fields: [{ name: 'query', type: [composeSchema('gateway.instances.CheckPhones', named)] }] };
    const queryType = avro.Type.forSchema(holder as avro.Schema);
    const queries = compileUnionCodec(queryType, unionKinds(named));
    const query = { kind: 'check_phones', phones: ['+5511988887777'] };
    const wire = queries.toWire({ query }) as { query: Record<string, unknown> };
    expect(wire.query).toEqual({ phones: ['+5511988887777'] });
    expect(queries.fromWire({ query: { phones: ['+5511988887777'] } })).toEqual({ query });
  });

  it('rejects an unknown kind with a clear error', () => {
    expect(() => codec.toWire({ content: { kind: 'telegram' } })).toThrow(/unknown kind "telegram"/);
  });
});
