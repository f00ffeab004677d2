// What `gateway ...` was asked to do, read from its arguments alone (no config, no services), so
// help and mistakes are answered before anything starts.
import { parseArgs } from 'node:util';
// Leaf modules, not the folders' indexes: help is answered without loading the roles.
import { listenUsage } from '../connectors/relay/usage.js';
import { replayNames } from '../processors/replay-names.js';
import { roleNames } from './roles.js';

interface CommandUsage {
  /** The word that selects it; the role runner is selected by `all` or a list of roles. */
  readonly name: string;
  readonly synopsis: string;
  readonly summary: string;
}

const ROLES = 'all | <role>[,<role>...]';

const commands: readonly CommandUsage[] = [
  { name: 'start', synopsis: 'start', summary: "bring up the local stack, then run every role (the README's run command)" },
  { name: 'all', synopsis: ROLES, summary: `run roles against the configured services; roles: ${roleNames.join(', ')}` },
  {
    name: 'replay',
    synopsis: 'replay <projection> | --all [--allow-gaps]',
    summary: `rebuild a projection (or every one) from offset zero and swap it in, printing records, seconds and records/s of each (a large backlog is shared with REPLAY_THREADS worker threads); projections: ${replayNames.join(', ')} (usage with its ClickHouse table usage_events, analytics the analyst tables of docs/analytics.md; with embedded chDB, stop the gateway first or set CLICKHOUSE_URL); refused up front, naming every gap, when retention has deleted records one needs, unless --allow-gaps`,
  },
  {
    name: 'accounts',
    synopsis: 'accounts create --name N --email E [--sandbox-numbers K] [--plan free|pro] [--locale pt|en|es|it|de|fr] [--country CC] [--json]',
    summary: 'create an account, its default project and an owner API key (printed once); --country (ISO 3166 alpha-2) reads phones written in national format',
  },
  { name: 'platform-admins', synopsis: 'platform-admins create --email E [--json]', summary: 'create a platform administrator; its credential (svc_platform_...) is printed once' },
  {
    name: 'advisories',
    synopsis: 'advisories publish --account A [--account B...] --title T --impact I --action X --link URL',
    summary: 'write advisory.published to every webhook of the accounts named',
  },
  {
    name: 'listen',
    synopsis: 'listen --forward-to URL [--events a,b] [--print] [--secret S] [--api-url URL] [--api-key K]',
    summary: 'relay the project\'s events to a local URL, signed like webhooks (gateway listen --help)',
  },
  {
    name: 'sql',
    synopsis: 'sql "<SELECT ...>" [--limit N]',
    summary: 'run one read-only SELECT on the analytics tables (docs/analytics.md), rows as JSON lines; with embedded chDB held by a running gateway, use POST /platform/sql instead',
  },
  { name: 'dead-letters', synopsis: 'dead-letters list [--limit N] [--json]', summary: 'the records consumers gave up on (gw.processors.dead), with who gave up and why' },
  {
    name: 'dead-letters',
    synopsis: 'dead-letters retry <partition:offset ...> | --all',
    summary: 'write dead letters back to their topics (--all: those no earlier --all wrote back)',
  },
  {
    name: 'dead-letters',
    synopsis: 'dead-letters list --deliveries [--endpoint ID] [--limit N] [--json]',
    summary: 'the webhook and partner deliveries given up on (gw.deliveries.dead), of one webhook or partner when named',
  },
  {
    name: 'dead-letters',
    synopsis: 'dead-letters retry --deliveries <dlv_... ...> | --endpoint ID | --all',
    summary: 'deliver them again, each once, as new deliveries with their own retries (--all: those no earlier --all sent)',
  },
  { name: 'stack', synopsis: 'stack up | down | status', summary: 'manage the local stack (Kafka, schema registry, Postgres databases, S3, SMTP)' },
  {
    name: 'stack',
    synopsis: 'stack cluster up | down | status',
    summary: 'a 3-node Kafka cluster beside it (replication 3, min in-sync 2) on 127.0.0.1:29092-29094',
  },
  { name: 'help', synopsis: 'help [<command>]', summary: "this usage, or one command's (also -h, --help, and <command> --help)" },
];

const SYNOPSIS_WIDTH = 27;

function lines(entries: readonly CommandUsage[]): string {
  return entries
    .map(({ synopsis, summary }) =>
      synopsis.length < SYNOPSIS_WIDTH ? `  ${synopsis.padEnd(SYNOPSIS_WIDTH)}${summary}` : `  ${synopsis}\n${' '.repeat(SYNOPSIS_WIDTH + 2)}${summary}`,
    )
    .join('\n');
}

/** Every command, as `gateway help` prints it. */
export const usage = `Usage: gateway <command>\n\n${lines(commands)}\n`;

const options = {
  help: { type: 'boolean', short: 'h' },
  name: { type: 'string' },
  email: { type: 'string' },
  'sandbox-numbers': { type: 'string' },
  plan: { type: 'string' },
  locale: { type: 'string' },
  country: { type: 'string' },
  json: { type: 'boolean' },
  account: { type: 'string', multiple: true },
  title: { type: 'string' },
  impact: { type: 'string' },
  action: { type: 'string' },
  link: { type: 'string' },
  limit: { type: 'string' },
  all: { type: 'boolean' },
  'allow-gaps': { type: 'boolean' },
  deliveries: { type: 'boolean' },
  endpoint: { type: 'string' },
} as const;

/** The operator's commands, run by `stack/commands.ts` (every other command runs roles, or is `listen`). */
const operatorCommands = ['accounts', 'platform-admins', 'advisories', 'stack', 'replay', 'sql', 'dead-letters'] as const;
export type OperatorCommand = (typeof operatorCommands)[number];

export function isOperatorCommand(command: string): command is OperatorCommand {
  return (operatorCommands as readonly string[]).includes(command);
}

export type CommandOptions = ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true; strict: true }>>['values'];

export type CommandLine =
  /** Printed on stdout, exit 0. */
  | { readonly kind: 'help'; readonly text: string }
  /** Printed on stderr, exit 1: what is wrong, then the usage. */
  | { readonly kind: 'mistake'; readonly text: string }
  /** `gateway listen`: the relay reads its own options. */
  | { readonly kind: 'listen'; readonly argv: readonly string[] }
  /** Any other command; `positionals` starts with the command itself. */
  | { readonly kind: 'command'; readonly command: string; readonly positionals: readonly string[]; readonly values: CommandOptions };

/** The commands a word selects (`dead-letters` has two forms); none for an unknown word. */
function commandsNamed(word: string): CommandUsage[] {
  const roles = word === 'all' || word.split(',').every((role) => (roleNames as readonly string[]).includes(role.trim()));
  return commands.filter((command) => command.name === (roles ? 'all' : word));
}

function helpOf(word: string): CommandLine {
  if (word === 'listen') return { kind: 'help', text: listenUsage };
  const found = commandsNamed(word);
  if (found.length === 0) return mistake(`Unknown command '${word}'.`);
  return { kind: 'help', text: `Usage:\n${lines(found.map((command) => ({ ...command, synopsis: `gateway ${command.synopsis}` })))}\n` };
}

function mistake(problem: string): CommandLine {
  return { kind: 'mistake', text: `${problem}\n\n${usage}` };
}

/**
 * `-h`, `--help` and `help [<command>]` print the usage (of one command when named), as does
 * `<command> --help`; an unknown command or option is a mistake, answered with the usage.
 */
export function readCommandLine(argv: readonly string[]): CommandLine {
  const [first, second] = argv;
  if (first === undefined) return mistake('Name a command.');
  if (first === 'help' || first === '--help' || first === '-h') return second === undefined ? { kind: 'help', text: usage } : helpOf(second);
  if (commandsNamed(first).length === 0) return mistake(`Unknown ${first.startsWith('-') ? 'option' : 'command'} '${first}'.`);
  if (first === 'listen') return argv.includes('--help') || argv.includes('-h') ? helpOf(first) : { kind: 'listen', argv: argv.slice(1) };
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, strict: true, options });
  } catch (error) {
    return mistake(error instanceof Error ? error.message : String(error));
  }
  if (parsed.values.help === true) return helpOf(first);
  return { kind: 'command', command: first, positionals: parsed.positionals, values: parsed.values };
}
