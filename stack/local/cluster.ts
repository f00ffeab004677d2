/**
 * A three-node Kafka cluster (KRaft, every node broker and controller) beside the development
 * stack, for what one broker cannot show: a broker lost under load. Topics are replicated three
 * times and a write needs two in-sync replicas, as in production. Its data, logs and pid files live
 * under `<root>/cluster`; the other services (registry, Postgres, S3, SMTP) are the stack's own.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { reason } from './health.js';
import { kafkaNode, newClusterId, type KafkaNode } from './kafka.js';
import { createFolders, layout, type Layout } from './layout.js';
import { withLock } from './lock.js';
import { ensureRunning, serviceStatus, stopService, type Log, type ServiceStatus } from './processes.js';

export const CLUSTER_SIZE = 3;
/** Node i's broker listens on FIRST_PORT + i - 1 and its controller 100 ports above. */
const FIRST_PORT = 29_092;
const HOST = '127.0.0.1';

export interface ClusterOptions {
  /** The stack's root; the cluster lives in its `cluster` folder. */
  readonly root: string;
  readonly log?: Log;
}

export interface ClusterStatus {
  /** The bootstrap list for KAFKA_BROKERS. */
  readonly brokers: string;
  readonly nodes: ReadonlyArray<ServiceStatus & { readonly name: string }>;
}

const silent: Log = () => {};
const clusterLayout = (root: string): Layout => layout(path.join(root, 'cluster'));

function nodes(clusterId?: string): KafkaNode[] {
  const ids = Array.from({ length: CLUSTER_SIZE }, (_, i) => i + 1);
  const controller = (id: number) => ({ host: HOST, port: FIRST_PORT + 99 + id });
  const voters = ids.map((id) => `${id}@${HOST}:${controller(id).port}`).join(',');
  return ids.map((id) => ({
    name: `kafka-${id}`,
    nodeId: id,
    broker: { host: HOST, port: FIRST_PORT + id - 1 },
    controller: controller(id),
    voters,
    replicas: { factor: CLUSTER_SIZE, minInSync: CLUSTER_SIZE - 1 },
    heap: '512m',
    // The controller fences a node that stopped heartbeating after 3 s (Kafka's default: 9 s), so
    // the leaders of a killed node's partitions move sooner; a production cluster keeps its own.
    settings: { 'broker.session.timeout.ms': 3_000, 'broker.heartbeat.interval.ms': 500 },
    ...(clusterId ? { clusterId } : {}),
  }));
}

/** The cluster's id, made on its first start: every node is formatted with it. */
function clusterId(l: Layout): string {
  const file = path.join(l.conf, 'cluster-id');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const id = newClusterId();
  mkdirSync(l.conf, { recursive: true });
  writeFileSync(file, `${id}\n`);
  return id;
}

/** The nodes as services; only a start, which may format their storage, needs the cluster's id. */
const services = (id?: string) => nodes(id).map(kafkaNode);

export const clusterBrokers = (): string => nodes().map((n) => `${n.broker.host}:${n.broker.port}`).join(',');

/** Starts the nodes that are not running, together (a controller quorum needs two of them), and waits until all answer. */
export async function clusterUp(opts: ClusterOptions): Promise<ClusterStatus> {
  const l = clusterLayout(opts.root);
  const log = opts.log ?? silent;
  createFolders(l);
  await withLock(l, log, async () => {
    const results = await Promise.allSettled(services(clusterId(l)).map((service) => ensureRunning(l, service, log)));
    const failures = new Set(results.flatMap((r) => (r.status === 'rejected' ? [reason(r.reason)] : [])));
    if (failures.size > 0) throw new Error(`the cluster did not come up:\n${[...failures].join('\n')}`);
  });
  return clusterStatus(opts);
}

export async function clusterDown(opts: ClusterOptions): Promise<void> {
  const l = clusterLayout(opts.root);
  const log = opts.log ?? silent;
  await withLock(l, log, () => Promise.all(services().map((service) => stopService(l, service, log))));
}

export async function clusterStatus(opts: ClusterOptions): Promise<ClusterStatus> {
  const l = clusterLayout(opts.root);
  const statuses = await Promise.all(services().map(async (service) => ({ name: service.name, ...(await serviceStatus(l, service)) })));
  return { brokers: clusterBrokers(), nodes: statuses };
}
