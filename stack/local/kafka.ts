import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { probeBroker } from '../../topics/index.js';
import { writeProperties, type Layout } from './layout.js';
import { resolveClasspath } from './maven.js';
import type { Port } from './ports.js';
import { runJava, type JvmService, type Log } from './processes.js';

// The newest 4.x that resolves completely: 4.4.0's kafka-tools-api jar was missing from Maven Central.
export const KAFKA_VERSION = '4.3.1';
const LOG4J_VERSION = '2.24.3';

/** The broker listens where the gateway looks for it: the first address of KAFKA_BROKERS. */
function listener(): Port {
  const first = (process.env.KAFKA_BROKERS?.trim() || '127.0.0.1:9092').split(',')[0]?.trim() ?? '';
  const match = /^(.+):(\d+)$/.exec(first);
  if (!match?.[1] || !match[2]) throw new Error(`KAFKA_BROKERS must start with host:port, got "${first}"`);
  return { host: match[1], port: Number(match[2]) };
}

/** The development stack's Kafka: one node, broker and controller, each record on it alone. */
export function kafkaService(): JvmService {
  const broker = listener();
  const controller = { host: broker.host, port: broker.port + 1 };
  return kafkaNode({
    name: 'kafka',
    nodeId: 1,
    broker,
    controller,
    voters: `1@${controller.host}:${controller.port}`,
    replicas: { factor: 1, minInSync: 1 },
    heap: '1g',
  });
}

/** One node of a KRaft cluster, broker and controller in one process. */
export interface KafkaNode {
  readonly name: `kafka${string}`;
  readonly nodeId: number;
  readonly broker: Port;
  readonly controller: Port;
  /** `controller.quorum.voters`: every controller of the cluster, `id@host:port`. */
  readonly voters: string;
  /** The replication of the internal topics and the brokers' defaults for the gateway's own. */
  readonly replicas: { readonly factor: number; readonly minInSync: number };
  readonly heap: string;
  /** Every node of a cluster is formatted with the same id; a single node makes its own. */
  readonly clusterId?: string;
  /** Server properties of this node beyond the ones every node gets. */
  readonly settings?: Readonly<Record<string, string | number>>;
}

export function kafkaNode(node: KafkaNode): JvmService {
  const { broker, controller, replicas } = node;
  const address = `${broker.host}:${broker.port}`;
  return {
    name: node.name,
    address,
    ports: [broker, controller],
    startTimeoutMs: 90_000,
    stopTimeoutMs: 30_000,
    probe: () => probeBroker(address),
    async prepare(l: Layout, log: Log) {
      const classpath = await resolveClasspath(
        l.cache,
        `kafka-${KAFKA_VERSION}`,
        [
          `org.apache.kafka:kafka_2.13:${KAFKA_VERSION}`,
          // Kafka logs through slf4j 1.7; this binding sends it to log4j2, configured below.
          `org.apache.logging.log4j:log4j-slf4j-impl:${LOG4J_VERSION}`,
          `org.apache.logging.log4j:log4j-core:${LOG4J_VERSION}`,
        ],
        log,
      );
      const dataDir = path.join(l.data, node.name);
      const serverProperties = path.join(l.conf, node.name, 'server.properties');
      const log4jProperties = path.join(l.conf, node.name, 'log4j2.properties');
      writeProperties(serverProperties, {
        'process.roles': 'broker,controller',
        'node.id': node.nodeId,
        'controller.quorum.voters': node.voters,
        listeners: `PLAINTEXT://${address},CONTROLLER://${controller.host}:${controller.port}`,
        'advertised.listeners': `PLAINTEXT://${address}`,
        'inter.broker.listener.name': 'PLAINTEXT',
        'controller.listener.names': 'CONTROLLER',
        'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
        'log.dirs': dataDir,
        'num.partitions': 1,
        'default.replication.factor': replicas.factor,
        'min.insync.replicas': replicas.minInSync,
        'offsets.topic.replication.factor': replicas.factor,
        'transaction.state.log.replication.factor': replicas.factor,
        'transaction.state.log.min.isr': replicas.minInSync,
        'share.coordinator.state.topic.replication.factor': replicas.factor,
        'share.coordinator.state.topic.min.isr': replicas.minInSync,
        'group.initial.rebalance.delay.ms': 0,
        // Lets sessions shorter than Kafka's default floor of 6 s be tried (topics/group-timing.ts).
        'group.min.session.timeout.ms': 1_000,
        'auto.create.topics.enable': 'false',
        ...node.settings,
      });
      // To stdout, which the stack appends to logs/<name>.log.
      writeProperties(log4jProperties, {
        'appender.out.type': 'Console',
        'appender.out.name': 'out',
        'appender.out.layout.type': 'PatternLayout',
        'appender.out.layout.pattern': '[%d] %p %m (%c)%n',
        'rootLogger.level': 'INFO',
        'rootLogger.appenderRef.out.ref': 'out',
      });
      const jvm = [`-Dlog4j2.configurationFile=${log4jProperties}`, '-cp', classpath.join(path.delimiter)];
      if (!existsSync(path.join(dataDir, 'meta.properties'))) {
        log(`${node.name}: formatting storage (first start)`);
        await runJava(l, node.name, 'formatting storage', [
          ...jvm,
          'kafka.tools.StorageTool',
          'format',
          '--cluster-id',
          node.clusterId ?? newClusterId(),
          '--config',
          serverProperties,
        ]);
      }
      return { args: [`-Xms${node.heap}`, `-Xmx${node.heap}`, ...jvm, 'kafka.Kafka', serverProperties] };
    },
  };
}

/** Kafka's cluster ids are 16 random bytes in URL-safe base64; its tools reject one starting with '-'. */
export function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}
