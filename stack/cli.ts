#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { buildClients } from './clients.js';
import { loadConfig, redactConfig, type Config } from './config.js';
import { createLogger } from './logger.js';
import { parseRoles, roleNames, startRoles } from './roles.js';
import { stackDown, stackStatus, stackUp, type StackStatus } from './local/index.js';
import { projections, replayProjection } from '../processors/index.js';

const usage = `Usage: gateway <command>

  start                      bring up the local stack, then run every role (the README's run command)
  all | <role>[,<role>...]   run roles against the configured services; roles: ${roleNames.join(', ')}
  replay <projection>        rebuild a projection from offset zero and swap it in; projections: ${[...projections.keys()].join(', ')}
  stack up | down | status   manage the local stack (Kafka, schema registry, Postgres databases, S3, SMTP)
`;

async function main(argv: string[]): Promise<number> {
  const { positionals } = parseArgs({ args: argv, allowPositionals: true, strict: true });
  const [command, arg] = positionals;
  const config = loadConfig();
  switch (command) {
    case 'start':
      printStatus(await stackUp({ root: config.stackRoot, log: (line) => console.log(line) }));
      return runRoles(config, 'all');
    case 'stack':
      return stackCommand(config, arg);
    case 'replay':
      return replay(config, arg);
    case undefined:
    case 'help':
      console.log(usage);
      return command === undefined ? 1 : 0;
    default:
      return runRoles(config, command);
  }
}

async function runRoles(config: Config, arg: string): Promise<number> {
  const roles = parseRoles(arg);
  const logger = createLogger(config.logLevel, config.logFormat);
  logger.info({ roles, config: redactConfig(config) }, 'starting');
  const clients = await buildClients(config, logger);
  const running = await startRoles(roles, clients);
  if (roles.includes('api')) {
    logger.info(`gateway ready: http://localhost:${config.port} (API docs at /docs, readiness at /ready)`);
  }
  await new Promise<void>((resolve) => {
    const shutdown = (signal: string) => {
      logger.info({ signal }, 'shutting down');
      process.once(signal, () => process.exit(1));
      resolve();
    };
    process.once('SIGINT', () => shutdown('SIGINT'));
    process.once('SIGTERM', () => shutdown('SIGTERM'));
  });
  await running.stop();
  await clients.close();
  return 0;
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

function printStatus(status: StackStatus): void {
  for (const [name, s] of Object.entries(status)) {
    console.log(`${name.padEnd(9)} ${s.up ? 'up  ' : 'down'} ${s.address}${s.detail ? `  (${s.detail})` : ''}`);
  }
}

async function replay(config: Config, name: string | undefined): Promise<number> {
  const projection = name === undefined ? undefined : projections.get(name);
  if (!projection) {
    console.error(`replay needs a projection: ${[...projections.keys()].join(', ')}`);
    return 1;
  }
  const logger = createLogger(config.logLevel, config.logFormat);
  const clients = await buildClients(config, logger);
  try {
    const result = await replayProjection(clients, projection);
    console.log(JSON.stringify(result));
    return 0;
  } finally {
    await clients.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
