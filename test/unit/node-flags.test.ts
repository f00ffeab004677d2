import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REPLAY_FLAGS, ROLE_FLAGS } from '../../stack/node-flags.js';

const scripts = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts;

describe('the Node flags of the roles and the replay', () => {
  it.each([
    ['start', 'dist/stack/cli.js', ROLE_FLAGS],
    ['gateway', 'dist/stack/cli.js', ROLE_FLAGS],
    // The log and replay benches run in their own process: they measure the path as it runs.
    ['bench:log', 'dist/bench/log.js', ROLE_FLAGS],
    ['bench:replay', 'dist/bench/replay.js', REPLAY_FLAGS],
  ])('are those `npm run %s` starts %s with', (script, entry, expected) => {
    const command = scripts[script]!.split('&&').map((part) => part.trim()).find((part) => part.includes(entry));
    expect(command, `the ${script} script runs ${entry}`).toBeDefined();
    const words = command!.split(/\s+/);
    const flags = words.slice(1, words.indexOf(entry));
    for (const flag of expected) expect(flags).toContain(flag);
  });
});
