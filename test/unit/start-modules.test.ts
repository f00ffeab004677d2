import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const dist = fileURLToPath(new URL('../../dist/stack/', import.meta.url));

/** A resolve hook that refuses Baileys: a module whose graph reaches it fails to load. */
const refuseBaileys = `export async function resolve(specifier, context, next) {
  if (specifier === '@whiskeysockets/baileys' || specifier.startsWith('@whiskeysockets/baileys/')) throw new Error('Baileys loaded from ' + context.parentURL);
  return next(specifier, context);
}`;

interface Loaded {
  /** The error output of the process, empty when every module loaded. */
  readonly error: string;
  /** The packages of node_modules whose CommonJS files were required. */
  readonly packages: readonly string[];
}

/** Imports built modules in a new Node process, as a role's process does when it starts, with Baileys refused. */
async function load(...modules: string[]): Promise<Loaded> {
  const script = [
    `import { createRequire, register } from 'node:module';`,
    `register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(refuseBaileys)}));`,
    ...modules.map((module) => `await import(${JSON.stringify(new URL(module, `file://${dist}`).href)});`),
    `const files = Object.keys(createRequire(import.meta.url).cache);`,
    `console.log(JSON.stringify([...new Set(files.flatMap((f) => f.match(/node_modules\\/((?:@[^/]+\\/)?[^/]+)/)?.[1] ?? []))]));`,
  ].join('\n');
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
    return { error: '', packages: JSON.parse(stdout) as string[] };
  } catch (error) {
    return { error: String((error as { stderr?: string }).stderr ?? error), packages: [] };
  }
}

describe('what a role’s process loads when it starts', () => {
  it('is built (npm run build)', () => {
    expect(existsSync(`${dist}connector-role.js`)).toBe(true);
  });

  it('leaves Baileys to the connector’s first number on it (stack/connector-role.ts)', async () => {
    expect((await load('clients.js', 'roles.js', 'connector-role.js')).error).toBe('');
    // The hook does refuse it: the Baileys network's own module needs it.
    expect((await load('baileys-network.js')).error).toContain('Baileys loaded from');
  }, 30_000);

  it('leaves the registry client’s JSON and Protobuf helpers and the ClickHouse server’s client to their first use', async () => {
    const { error, packages } = await load('clients.js');
    expect(error).toBe('');
    // What every process loads, so the check sees the require cache at all.
    expect(packages).toEqual(expect.arrayContaining(['kafkajs', 'pg', '@kafkajs/confluent-schema-registry']));
    for (const unused of ['ajv', 'protobufjs', '@clickhouse/client']) expect(packages).not.toContain(unused);
  }, 30_000);
});
