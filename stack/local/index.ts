/**
 * The local services the gateway needs, started and stopped by the project itself: Kafka, the
 * schema registry, S3 and SMTP as detached JVMs (downloaded once with Maven into the cache
 * folder), and databases on the Postgres server already running. Data, logs and pid files live
 * under `<root>` (default `<repo>/.stack`).
 */
import { clusterDown } from './cluster.js';
import { reason } from './health.js';
import { kafkaService } from './kafka.js';
import { createFolders, layout } from './layout.js';
import { withLock } from './lock.js';
import { ensureDatabases, postgresStatus } from './postgres.js';
import { ensureRunning, serviceStatus, stopService } from './processes.js';
import { registryService } from './registry.js';
import { s3Service } from './s3.js';
import { smtpService } from './smtp.js';

export interface StackOptions {
  root?: string;
  log?: (line: string) => void;
}

export type StackStatus = Record<
  'kafka' | 'registry' | 'postgres' | 's3' | 'smtp',
  { up: boolean; address: string; pid?: number; detail?: string }
>;

const silent = (): void => {};

/** Starts what is not running, in parallel (the registry once its database exists), and waits until all are healthy. */
export async function stackUp(opts: StackOptions = {}): Promise<StackStatus> {
  const l = layout(opts.root);
  const log = opts.log ?? silent;
  createFolders(l);
  await withLock(l, log, async () => {
    const databases = ensureDatabases(log);
    const results = await Promise.allSettled([
      databases,
      databases.then(() => ensureRunning(l, registryService(), log)),
      ensureRunning(l, kafkaService(), log),
      ensureRunning(l, s3Service(), log),
      ensureRunning(l, smtpService(), log),
    ]);
    const failures = new Set(results.flatMap((r) => (r.status === 'rejected' ? [reason(r.reason)] : [])));
    if (failures.size > 0) throw new Error(`the local stack did not come up:\n${[...failures].join('\n')}`);
  });
  return stackStatus(opts);
}

/** Stops the processes this stack started, the test cluster's too; Postgres, which it did not start, keeps running. */
export async function stackDown(opts: StackOptions = {}): Promise<void> {
  const l = layout(opts.root);
  const log = opts.log ?? silent;
  const services = [kafkaService(), registryService(), s3Service(), smtpService()];
  await withLock(l, log, async () => {
    await Promise.all(services.map((service) => stopService(l, service, log)));
  });
  await clusterDown({ root: l.root, log });
}

/** Which services answer their health probes, and the pids of those this stack started. */
export async function stackStatus(opts: StackOptions = {}): Promise<StackStatus> {
  const l = layout(opts.root);
  const [kafka, registry, postgres, s3, smtp] = await Promise.all([
    serviceStatus(l, kafkaService()),
    serviceStatus(l, registryService()),
    postgresStatus(),
    serviceStatus(l, s3Service()),
    serviceStatus(l, smtpService()),
  ]);
  return { kafka, registry, postgres, s3, smtp };
}
