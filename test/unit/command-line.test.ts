import { describe, expect, it } from 'vitest';
import { listenUsage } from '../../connectors/relay/index.js';
import { readCommandLine, usage } from '../../stack/command-line.js';

describe('the gateway command line', () => {
  it.each([['--help'], ['-h'], ['help']])('prints the usage for %s', (flag) => {
    expect(readCommandLine([flag])).toEqual({ kind: 'help', text: usage });
  });

  it('lists every command in the usage', () => {
    for (const command of ['start', 'all | <role>', 'replay', 'accounts create', 'platform-admins create', 'advisories publish', 'listen', 'dead-letters list', 'dead-letters retry', 'stack up', 'help']) {
      expect(usage).toContain(`  ${command}`);
    }
  });

  it.each([
    [['help', 'accounts'], 'gateway accounts create --name N --email E'],
    [['--help', 'dead-letters'], 'gateway dead-letters retry'],
    [['accounts', 'create', '--help'], 'gateway accounts create --name N --email E'],
    [['accounts', '-h'], 'gateway accounts create'],
    [['start', '--help'], 'gateway start'],
    [['processor,dispatcher', '--help'], 'gateway all | <role>'],
    [['help', 'api'], 'gateway all | <role>'],
    [['stack', 'up', '--help'], 'gateway stack up | down | status'],
  ])('prints one command’s usage for %j', (argv, synopsis) => {
    const line = readCommandLine(argv);
    expect(line.kind).toBe('help');
    if (line.kind === 'help') {
      expect(line.text).toContain(synopsis);
      expect(line.text).not.toBe(usage);
    }
  });

  it('prints the relay’s own usage for listen', () => {
    expect(readCommandLine(['help', 'listen'])).toEqual({ kind: 'help', text: listenUsage });
    expect(readCommandLine(['listen', '--help'])).toEqual({ kind: 'help', text: listenUsage });
    expect(readCommandLine(['listen', '--print', '--events', 'message.sent'])).toEqual({ kind: 'listen', argv: ['--print', '--events', 'message.sent'] });
  });

  it.each([
    [[], 'Name a command.'],
    [['bogus'], "Unknown command 'bogus'."],
    [['processr'], "Unknown command 'processr'."],
    [['help', 'bogus'], "Unknown command 'bogus'."],
    [['--bogus'], "Unknown option '--bogus'."],
    [['accounts', 'create', '--nmae', 'A'], "Unknown option '--nmae'"],
    [['start', '-x'], "Unknown option '-x'"],
  ])('refuses %j with what is wrong, then the usage', (argv, problem) => {
    const line = readCommandLine(argv);
    expect(line.kind).toBe('mistake');
    if (line.kind === 'mistake') {
      expect(line.text.startsWith(problem)).toBe(true);
      expect(line.text.endsWith(usage)).toBe(true);
    }
  });

  it('reads a command with its options', () => {
    expect(readCommandLine(['accounts', 'create', '--name', 'Acme', '--email', 'ops@acme.test', '--json'])).toEqual({
      kind: 'command',
      command: 'accounts',
      positionals: ['accounts', 'create'],
      values: { name: 'Acme', email: 'ops@acme.test', json: true },
    });
    expect(readCommandLine(['connector,dispatcher'])).toMatchObject({ kind: 'command', command: 'connector,dispatcher' });
    expect(readCommandLine(['all'])).toMatchObject({ kind: 'command', command: 'all' });
  });
});
