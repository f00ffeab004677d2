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

/** Imports the built modules in a new Node process under the hook; its error output, empty when they loaded. */
async function importWithoutBaileys(...modules: string[]): Promise<string> {
  const script = [
    `import { register } from 'node:module';`,
    `register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(refuseBaileys)}));`,
    ...modules.map((module) => `await import(${JSON.stringify(new URL(module, `file://${dist}`).href)});`),
  ].join('\n');
  try {
    await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
    return '';
  } catch (error) {
    return String((error as { stderr?: string }).stderr ?? error);
  }
}

describe('the connector role’s modules', () => {
  it('load without Baileys, which waits for the first number on it (stack/connector-role.ts)', async () => {
    expect(existsSync(`${dist}connector-role.js`), 'the build (npm run build) is in dist/').toBe(true);
    expect(await importWithoutBaileys('clients.js', 'roles.js', 'connector-role.js')).toBe('');
    // The hook does refuse it: the Baileys network's own module needs it.
    expect(await importWithoutBaileys('baileys-network.js')).toContain('Baileys loaded from');
  }, 30_000);
});
