import { buildClients, type Clients } from './clients.js';
import type { Config } from './config.js';
import { createLogger } from './logger.js';
import { replayMembers } from './replay-members.js';
import { usage, type CommandOptions, type OperatorCommand } from './command-line.js';
import { clusterDown, clusterStatus, clusterUp, type ClusterStatus } from './local/cluster.js';
import { stackDown, stackStatus, stackUp, type StackStatus } from './local/index.js';
import { clickhouseTablesFor, LogGapsError, projectionsFor, replayNames, replayAll, seedChangelogs, type ReplayResult } from '../processors/index.js';
import { readOnlySql, RefusedSql, SQL_ROW_LIMIT } from '../processors/analytics/index.js';
import { createAccount, type CreatedAccount } from '../processors/config/accounts.js';
import { createPlatformAdmin } from '../processors/config/platform-admins.js';
import { connectSandboxNumbers } from '../processors/instances/sandbox-pairing.js';
import { isLocale } from '../api/errors.js';
import { countryCode } from '../schemas/phones.js';
import type { AdvisoryInput } from '../events/renderers/index.js';
import { checkedAdvisory, publishAdvisory } from '../processors/events/index.js';
import { listDeadLetters, redrive, redriveAll, type DeadLetter } from '../topics/index.js';
import { listDeadDeliveries, redeliverDead, type DeadDelivery, type DeadSelection } from '../connectors/webhooks/dead-deliveries.js';
import { retrySchedules } from '../connectors/webhooks/index.js';
import { REPLAY_FLAGS, rerunWith } from './node-flags.js';

/**
 * The operator's commands of `gateway` (every one but the roles and `listen`), loaded only when
 * one of them runs: a role's process does not load what they use.
 */
export async function runOperatorCommand(config: Config, command: OperatorCommand, positionals: readonly string[], values: CommandOptions): Promise<number> {
  const arg = positionals[1];
  switch (command) {
    case 'accounts':
      if (arg !== 'create' || !values.name || !values.email) {
        console.error(usage);
        return 1;
      }
      return createAccountCommand(config, {
        name: values.name,
        email: values.email,
        sandboxNumbers: Number(values['sandbox-numbers'] ?? 0),
        plan: values.plan ?? 'free',
        locale: values.locale,
        country: values.country,
        json: values.json ?? false,
      });
    case 'platform-admins':
      if (arg !== 'create' || !values.email) {
        console.error(usage);
        return 1;
      }
      return createPlatformAdminCommand(config, values.email, values.json ?? false);
    case 'advisories':
      if (arg !== 'publish') {
        console.error(usage);
        return 1;
      }
      return publishAdvisoryCommand(config, {
        accounts: values.account ?? [],
        title: values.title ?? '',
        impact: values.impact ?? '',
        action: values.action ?? '',
        link: values.link ?? '',
      });
    case 'stack':
      return arg === 'cluster' ? clusterCommand(config, positionals[2]) : stackCommand(config, arg);
    case 'replay':
      return rerunWith(REPLAY_FLAGS) ?? replay(config, values.all === true ? 'all' : arg, values['allow-gaps'] === true);
    case 'sql':
      return sqlCommand(config, positionals.slice(1).join(' '), values.limit);
    case 'dead-letters':
      if (values.deliveries === true) {
        return deadDeliveriesCommand(config, arg, positionals.slice(2), { limit: values.limit, json: values.json ?? false, all: values.all ?? false, endpoint: values.endpoint });
      }
      return deadLettersCommand(config, arg, positionals.slice(2), { limit: values.limit, json: values.json ?? false, all: values.all ?? false });
  }
}

/** Runs a command's work with the clients of a process, closed whatever the outcome; its logs only warnings. */
async function withClients<T>(config: Config, work: (clients: Clients) => Promise<T>): Promise<T> {
  const clients = await buildClients(config, createLogger('warn', config.logFormat));
  try {
    return await work(clients);
  } finally {
    await clients.close();
  }
}

interface AccountInput {
  readonly name: string;
  readonly email: string;
  readonly sandboxNumbers: number;
  readonly plan: string;
  readonly locale?: string;
  readonly country?: string;
}

export async function newAccount(clients: Clients, input: AccountInput): Promise<CreatedAccount> {
  if (!Number.isInteger(input.sandboxNumbers) || input.sandboxNumbers < 0) throw new Error('--sandbox-numbers takes a whole number');
  if (input.locale !== undefined && !isLocale(input.locale)) throw new Error('--locale is one of pt, en, es, it, de, fr');
  const country = input.country === undefined ? undefined : countryCode(input.country);
  if (input.country !== undefined && country === undefined) throw new Error('--country is an ISO 3166 alpha-2 code, e.g. BR');
  return createAccount(
    clients.producer,
    { name: input.name, email: input.email, plan: input.plan, locale: input.locale, country, sandboxNumbers: input.sandboxNumbers },
    connectSandboxNumbers(clients.producer),
  );
}

async function createAccountCommand(config: Config, input: AccountInput & { json: boolean }): Promise<number> {
  return withClients(config, async (clients) => {
    const account = await newAccount(clients, input);
    console.log(input.json ? JSON.stringify(account) : `account ${account.account_id}\nproject ${account.project_id}\napi key ${account.api_key} (shown once)`);
    return 0;
  });
}

async function createPlatformAdminCommand(config: Config, email: string, json: boolean): Promise<number> {
  return withClients(config, async (clients) => {
    const admin = await createPlatformAdmin(clients.producer, email);
    console.log(json ? JSON.stringify(admin) : `platform administrator ${admin.id} (${admin.email})\ncredential ${admin.credential} (shown once)`);
    return 0;
  });
}

async function publishAdvisoryCommand(config: Config, input: AdvisoryInput): Promise<number> {
  const advisory = checkedAdvisory(input);
  return withClients(config, async (clients) => {
    console.log(JSON.stringify(await publishAdvisory(clients, advisory)));
    return 0;
  });
}

/** The key goes to the terminal only, never to the log. */
export function printFirstAccount(account: CreatedAccount, port: number): void {
  console.log(
    [
      '',
      'A sandbox account was created with one connected sandbox number. Its API key (shown once):',
      `  ${account.api_key}`,
      `Try: curl -s -X POST localhost:${port}/messages/text -H 'authorization: Bearer ${account.api_key}' \\`,
      `       -H 'content-type: application/json' -d '{"to":"+5511999998888","body":"Hello"}'`,
      '',
    ].join('\n'),
  );
}

async function deadLettersCommand(
  config: Config,
  action: string | undefined,
  ids: readonly string[],
  options: { limit: string | undefined; json: boolean; all: boolean },
): Promise<number> {
  const limit = Number(options.limit ?? 100);
  const valid = (action === 'list' && Number.isInteger(limit) && limit > 0) || (action === 'retry' && options.all !== ids.length > 0);
  if (!valid) {
    console.error(usage);
    return 1;
  }
  return withClients(config, async (clients) => {
    if (action === 'list') {
      const letters = await listDeadLetters(clients, limit);
      console.log(options.json ? JSON.stringify(letters.map(deadLetterJson)) : letters.map(deadLetterLine).join('\n') || 'no dead letters');
      return 0;
    }
    const redriven = options.all ? await redriveAll(clients) : await redrive(clients, ids);
    console.log(`re-drove ${redriven.length} dead letter(s)${redriven.map((l) => `\n  ${l.id} -> ${l.topic}`).join('')}`);
    return 0;
  });
}

/** `dead-letters list|retry --deliveries`: webhook and partner deliveries given up on. */
async function deadDeliveriesCommand(
  config: Config,
  action: string | undefined,
  ids: readonly string[],
  options: { limit: string | undefined; json: boolean; all: boolean; endpoint: string | undefined },
): Promise<number> {
  const limit = Number(options.limit ?? 100);
  const selections = [ids.length > 0, options.all, options.endpoint !== undefined].filter(Boolean).length;
  const valid = (action === 'list' && Number.isInteger(limit) && limit > 0 && ids.length === 0 && !options.all) || (action === 'retry' && selections === 1);
  if (!valid) {
    console.error(usage);
    return 1;
  }
  return withClients(config, async (clients) => {
    if (action === 'list') {
      const dead = await listDeadDeliveries(clients, { limit, targetId: options.endpoint });
      console.log(options.json ? JSON.stringify(dead.map(deadDeliveryJson)) : dead.map(deadDeliveryLine).join('\n') || 'no dead deliveries');
      return 0;
    }
    const selection: DeadSelection = options.all
      ? { kind: 'all' }
      : options.endpoint !== undefined
        ? { kind: 'endpoint', targetId: options.endpoint }
        : { kind: 'ids', ids };
    const sent = await redeliverDead({ ...clients, schedules: retrySchedules(config.webhooks.retryDelaysMs) }, selection);
    console.log(`delivering ${sent.length} dead deliver${sent.length === 1 ? 'y' : 'ies'} again${sent.map((d) => `\n  ${d.delivery_id} -> ${d.target_kind} ${d.target_id}`).join('')}`);
    return 0;
  });
}

const deadDeliveryJson = (d: DeadDelivery) => ({ ...d, at: new Date(d.at).toISOString() });

function deadDeliveryLine(d: DeadDelivery): string {
  return `${d.delivery_id}\t${d.event_type}\t${d.target_kind} ${d.target_id}\t${d.attempts} attempts\t${new Date(d.at).toISOString()}\t${d.last_error ?? ''}`;
}

const deadLetterJson = (l: DeadLetter) => ({ ...l, at: new Date(l.at).toISOString() });

function deadLetterLine(l: DeadLetter): string {
  return `${l.id}\t${l.topic}/${l.partition}/${l.offset}\t${l.by}\t${new Date(l.at).toISOString()}\t${l.reason}`;
}

async function stackCommand(config: Config, action: string | undefined): Promise<number> {
  const options = { root: config.stackRoot, log: (line: string) => console.log(line) };
  switch (action) {
    case 'up':
      printStatus(await stackUp(options));
      return 0;
    case 'down':
      await stackDown(options);
      return 0;
    case 'status': {
      const status = await stackStatus(options);
      printStatus(status);
      return Object.values(status).every((s) => s.up) ? 0 : 3;
    }
    default:
      console.error(usage);
      return 1;
  }
}

async function clusterCommand(config: Config, action: string | undefined): Promise<number> {
  const options = { root: config.stackRoot, log: (line: string) => console.log(line) };
  switch (action) {
    case 'up':
      return printCluster(await clusterUp(options));
    case 'down':
      await clusterDown(options);
      return 0;
    case 'status':
      return printCluster(await clusterStatus(options));
    default:
      console.error(usage);
      return 1;
  }
}

/** Exits 3 when a node is down, like `stack status`. */
function printCluster(status: ClusterStatus): number {
  for (const node of status.nodes) console.log(`${node.name.padEnd(9)} ${node.up ? 'up  ' : 'down'} ${node.address}${node.detail ? `  (${node.detail})` : ''}`);
  console.log(`KAFKA_BROKERS=${status.brokers} KAFKA_REPLICATION_FACTOR=3`);
  return status.nodes.every((n) => n.up) ? 0 : 3;
}

export function printStatus(status: StackStatus): void {
  for (const [name, s] of Object.entries(status)) {
    console.log(`${name.padEnd(9)} ${s.up ? 'up  ' : 'down'} ${s.address}${s.detail ? `  (${s.detail})` : ''}`);
  }
}

/**
 * `replay <projection>` or `replay --all`: a line per projection (and ClickHouse table) as it is
 * swapped in (records, seconds, records/s), then the results as JSON on the last line (an object
 * for one projection without a table, an array otherwise). A replay that rebuilds a ClickHouse
 * table opens the store first: embedded chDB held by a running gateway fails at once, before
 * anything is rebuilt.
 */
async function replay(config: Config, name: string | undefined, allowGaps: boolean): Promise<number> {
  const names: readonly string[] = name === 'all' ? replayNames : replayNames.filter((p) => p === name);
  if (names.length === 0) {
    console.error(`replay needs a projection or --all: ${replayNames.join(', ')}`);
    return 1;
  }
  const logger = createLogger(config.logLevel, config.logFormat);
  const clients = await buildClients(config, logger);
  const threads = replayMembers(config);
  try {
    const tables = names.flatMap((n) => clickhouseTablesFor('replay').get(n) ?? []);
    if (tables.length > 0) await clients.clickhouse.query('SELECT 1');
    await seedChangelogs(clients);
    const projections = projectionsFor(clients, 'replay');
    const clickhouse = { clickhouse: clients.clickhouse, tables };
    const results = await replayAll(clients, names.flatMap((n) => { const p = projections.get(n); return p ? [p] : []; }), { allowGaps, clickhouse, members: threads.members, onReplayed: (r) => console.log(replayLine(r)) }).catch(
      (error: unknown) => {
        if (!(error instanceof LogGapsError)) throw error;
        console.error(error.message);
        return undefined;
      },
    );
    if (results === undefined) return 1;
    console.log(JSON.stringify(results.length === 1 ? results[0] : results));
    return 0;
  } finally {
    await threads.close();
    await clients.close();
  }
}

/**
 * `sql "<SELECT …>"`: one read-only statement on the analytics store, its rows as JSON lines (a
 * last line on stderr when the limit cut them). With embedded chDB a running gateway holds the
 * store: this fails at once, naming POST /platform/sql, the path then.
 */
async function sqlCommand(config: Config, sql: string, limitArg: string | undefined): Promise<number> {
  const limit = limitArg === undefined ? undefined : Number(limitArg);
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= SQL_ROW_LIMIT)) {
    console.error(`--limit is a whole number from 1 to ${SQL_ROW_LIMIT}`);
    return 1;
  }
  const logger = createLogger(config.logLevel, config.logFormat);
  const clients = await buildClients(config, logger);
  try {
    const result = await readOnlySql(clients.clickhouse, sql, limit).catch((error: unknown) => {
      if (error instanceof RefusedSql) {
        console.error(`refused: ${error.message}`);
        return undefined;
      }
      if (error instanceof Error && error.message.includes('another process holds it')) throw new Error(`${error.message} With a running gateway, POST /platform/sql runs the query in it.`);
      throw error;
    });
    if (result === undefined) return 1;
    for (const row of result.rows) console.log(JSON.stringify(row));
    if (result.truncated) console.error(`(the first ${result.rows.length} rows: more matched; raise --limit up to ${SQL_ROW_LIMIT})`);
    return 0;
  } finally {
    await clients.close();
  }
}

function replayLine(r: ReplayResult): string {
  const seconds = r.durationMs / 1_000;
  const gaps = r.gaps.length > 0 ? `  (without ${r.gaps.length} partition start(s) retention deleted)` : '';
  const threads = r.applied && r.applied.elsewhere > 0 ? `; worker threads applied ${r.applied.elsewhere} of the records` : '';
  return `${r.projection.padEnd(14)} ${String(r.records).padStart(9)} records ${seconds.toFixed(1).padStart(7)} s ${Math.round(r.records / seconds).toString().padStart(8)} records/s (${(r.swapMs / 1_000).toFixed(1)} s of it swapping in${threads})${gaps}`;
}

