import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { topics } from './catalogue.js';
import { composeSchema, loadSchemaFiles, schemasDir, type AvroJson, type NamedSchema } from '../schemas/load.js';

/**
 * Every version of each topic's value schema that has been released, oldest first, in
 * `schemas/history/<topic>/v<N>.json`. The compatibility test registers them in order and then
 * the current schema, so a change that would break readers of older records fails the suite.
 */
export const historyDir = path.join(schemasDir, 'history');

export function currentTopicSchemas(named: ReadonlyMap<string, NamedSchema> = loadSchemaFiles()): Map<string, AvroJson> {
  return new Map(Object.values(topics).map((spec) => [spec.name, composeSchema(spec.schema, named)]));
}

export function releasedVersions(topic: string): AvroJson[] {
  const dir = path.join(historyDir, topic);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => /^v\d+\.json$/.test(file))
    .sort((a, b) => Number(a.slice(1, -5)) - Number(b.slice(1, -5)))
    .map((file) => JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as AvroJson);
}

/** Writes a new version for every topic whose current schema differs from its last released one. */
export function snapshot(): string[] {
  const written: string[] = [];
  for (const [topic, schema] of currentTopicSchemas()) {
    const versions = releasedVersions(topic);
    const last = versions[versions.length - 1];
    if (last !== undefined && JSON.stringify(last) === JSON.stringify(schema)) continue;
    const file = path.join(historyDir, topic, `v${versions.length + 1}.json`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify(schema, null, 2)}\n`);
    written.push(path.relative(schemasDir, file));
  }
  return written;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const written = snapshot();
  console.log(written.length === 0 ? 'every topic schema is already released' : `released:\n  ${written.join('\n  ')}`);
}
