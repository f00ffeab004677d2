import { buildClients } from './clients.js';
import { startProcessLiveness } from './member-liveness.js';
import { loadConfig, redactConfig, refuseSandboxInProduction, withStartInstance, type Config } from './config.js';
import { createLogger } from './logger.js';
import { parseRoles, startRoles, type Role, type RunningRoles } from './roles.js';
import type { Clients } from './clients.js';
import { listenForStop } from './stop-signal.js';
import { isOperatorCommand, readCommandLine } from './command-line.js';
import { stackUp } from './local/index.js';
import { quietKnownWarnings } from './process-warnings.js';

async function main(argv: string[]): Promise<number> {
  const line = readCommandLine(argv);
  switch (line.kind) {
    case 'help':
      console.log(line.text);
      return 0;
    case 'mistake':
      console.error(line.text);
      return 1;
    case 'listen':
      return (await import('../connectors/relay/index.js')).listenCommand(line.argv, process.env, loadConfig().port);
  }
  const { command, positionals, values } = line;
  // The README's run command is a development machine's: the sandbox providers are its defaults.
  const config = loadConfig(process.env, { defaultMode: command === 'start' ? 'development' : 'production' });
  if (command === 'start') {
    refuseSandboxInProduction(config); // before the stack comes up, when GATEWAY_MODE=production was set
    const { printStatus } = await import('./commands.js');
    printStatus(await stackUp({ root: config.stackRoot, log: (text) => console.log(text) }));
    return runRoles(withStartInstance(config), 'all', { firstAccount: true });
  }
  // The operator's commands are loaded only when one runs: a role's process does not load them.
  if (isOperatorCommand(command)) {
    // Only a role's process joins as its instance: a command run beside it must not fence its members.
    const commandConfig = { ...config, kafka: { ...config.kafka, instanceId: undefined } };
    return (await import('./commands.js')).runOperatorCommand(commandConfig, command, positionals, values);
  }
  return runRoles(config, command);
}

async function runRoles(config: Config, arg: string, options: { firstAccount?: boolean } = {}): Promise<number> {
  const roles = parseRoles(arg);
  refuseSandboxInProduction(config);
  const stop = listenForStop();
  const logger = createLogger(config.logLevel, config.logFormat);
  void stop.received.then((signal) => logger.info({ signal }, 'shutting down'));
  logger.info({ roles, config: redactConfig(config) }, 'starting');
  // A stop while the clients connect ends the process at once: no group is joined yet, so
  // nothing is left to leave, and an unreachable broker would hold it for a minute of retries.
  const clients = await Promise.race([buildClients(config, logger, { liveness: true }), stop.received.then(() => undefined)]);
  if (clients === undefined) {
    logger.info('stopped while connecting, before joining any group');
    return 0;
  }
  // Side by side: the members are kept from the clients' start, and recorded once the lock is taken.
  const [liveness, running] = await Promise.all([
    startProcessLiveness(clients),
    startRoles(roles, clients),
  ]);
  const demo = stop.asked ? undefined : await announce(config, roles, clients, running, options);
  const fenced = await Promise.race([stop.received.then(() => undefined), clients.fenced]);
  if (fenced) {
    logger.error({ ...fenced, instanceId: config.kafka.instanceId }, 'another process joined this group under GATEWAY_INSTANCE_ID; stopping this one');
  }
  await demo?.close();
  await running.stop();
  await liveness?.stop();
  await clients.close();
  return fenced ? 1 : 0;
}

/** What a started gateway says and opens: the first start's sandbox account, its address, and the demo partner page, returned to be closed. */
async function announce(
  config: Config,
  roles: readonly Role[],
  clients: Clients,
  running: RunningRoles,
  options: { firstAccount?: boolean },
): Promise<{ close(): Promise<void> } | undefined> {
  if (options.firstAccount && running.api?.directory.accounts.size === 0) {
    const { newAccount, printFirstAccount } = await import('./commands.js');
    const account = await newAccount(clients, { name: 'Sandbox', email: 'sandbox@gateway.local', sandboxNumbers: 1, plan: 'free' });
    printFirstAccount(account, config.port);
  }
  // Said once the first start's sandbox account exists, so what it prints comes before.
  if (roles.includes('api')) {
    clients.logger.info(`gateway ready: http://localhost:${config.port} (API docs at /docs, readiness at /ready)`);
  }
  const demo =
    options.firstAccount && running.api && config.demoPort > 0
      ? await (await import('./demo/server.js')).startDemoPartner(
          { producer: clients.producer, directory: running.api.directory },
          { host: config.host, port: config.demoPort, apiBase: config.media.publicBaseUrl, widgetUrl: config.widgetUrl },
        )
      : undefined;
  if (demo) console.log(`Demo partner page (opens the Connect component on the sandbox): ${demo.url}\n`);
  return demo;
}

quietKnownWarnings();
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
