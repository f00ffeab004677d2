import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROLE_FLAGS } from '../../stack/node-flags.js';

const scripts = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts;

describe('the roles’ Node flags', () => {
  it.each(['start', 'gateway'])('are those `npm run %s` starts the gateway with', (script) => {
    const command = scripts[script]!.split('&&').map((part) => part.trim()).find((part) => part.includes('dist/stack/cli.js'));
    expect(command, `the ${script} script runs the gateway's command line`).toBeDefined();
    const words = command!.split(/\s+/);
    const flags = words.slice(1, words.indexOf('dist/stack/cli.js'));
    for (const flag of ROLE_FLAGS) expect(flags).toContain(flag);
  });
});
