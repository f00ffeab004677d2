import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The API's own short-lived working state (docs/operations.md): the only tables a route writes. */
const WORKING_STATE = ['api.connect_sessions', 'api.connect_codes', 'api.email_codes', 'api.email_code_events', 'api.panel_sessions', 'api.idempotency_keys', 'api.rate_buckets'];
/** SQL that writes, as the code spells it (keywords upper case). */
const WRITE = /\b(?:INSERT\s+INTO|DELETE\s+FROM|UPDATE|TRUNCATE|COPY)\s+(?!SET\b)([a-z_][\w.]*)/g;
const IMPORT = /import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'([^']+)'/g;

function sourcesUnder(folder: string): string[] {
  return readdirSync(path.join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => path.join(folder, name));
}

/** The repository path each imported name comes from, in one source file. */
function importsOf(file: string): Map<string, string> {
  const names = new Map<string, string>();
  for (const [, list, from] of readFileSync(path.join(root, file), 'utf8').matchAll(IMPORT)) {
    const module = path.relative(root, path.resolve(root, path.dirname(file), from!)).replace(/\.js$/, '.ts');
    for (const name of list!.split(',').map((n) => n.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0]!)) if (name !== '') names.set(name, module);
  }
  return names;
}

/** Issue 19 item 2: domain changes are commands on the log, written below `api/`, the same for the CLI and the routes. */
describe('command writers below api/', () => {
  it('gives the CLI and the routes the same config commands, from processors/config', () => {
    const uses: Record<string, readonly string[]> = {
      'stack/commands.ts': ['createAccount', 'createPlatformAdmin', 'connectSandboxNumbers'],
      'api/connect/routes.ts': ['createAccount', 'createInstance'],
      'api/accounts/routes.ts': ['addProject'],
      'api/platform/routes.ts': ['registerPartner', 'changePartner', 'rotatePartnerSecret', 'setPartnerActive', 'setPartnerLogo'],
    };
    for (const [file, names] of Object.entries(uses)) {
      const imports = importsOf(file);
      for (const name of names) expect(imports.get(name), `${file} imports ${name}`).toMatch(/^processors\/(config|instances)\//);
    }
  });

  it('leaves no route writing a table of domain state: only the API working state', () => {
    const written = sourcesUnder('api').flatMap((file) => [...readFileSync(path.join(root, file), 'utf8').matchAll(WRITE)].map((m) => `${file}: ${m[1]!.toLowerCase()}`));
    expect(written.length).toBeGreaterThan(0);
    expect(written.filter((w) => !WORKING_STATE.includes(w.split(': ')[1]!))).toEqual([]);
  });
});
