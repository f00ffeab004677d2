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

export function kafkaService(): JvmService {
  const broker = listener();
  const controller = { host: broker.host, port: broker.port + 1 };
  const address = `${broker.host}:${broker.port}`;
  return {
    name: 'kafka',
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
      const dataDir = path.join(l.data, 'kafka');
      const serverProperties = path.join(l.conf, 'kafka', 'server.properties');
      const log4jProperties = path.join(l.conf, 'kafka', 'log4j2.properties');
      writeProperties(serverProperties, {
        'process.roles': 'broker,controller',
        'node.id': 1,
        'controller.quorum.voters': `1@${controller.host}:${controller.port}`,
        listeners: `PLAINTEXT://${address},CONTROLLER://${controller.host}:${controller.port}`,
        'advertised.listeners': `PLAINTEXT://${address}`,
        'inter.broker.listener.name': 'PLAINTEXT',
        'controller.listener.names': 'CONTROLLER',
        'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
        'log.dirs': dataDir,
        'num.partitions': 1,
        'offsets.topic.replication.factor': 1,
        'transaction.state.log.replication.factor': 1,
        'transaction.state.log.min.isr': 1,
        'share.coordinator.state.topic.replication.factor': 1,
        'share.coordinator.state.topic.min.isr': 1,
        'group.initial.rebalance.delay.ms': 0,
        // Lets sessions shorter than Kafka's default floor of 6 s be tried (topics/group-timing.ts).
        'group.min.session.timeout.ms': 1_000,
        'auto.create.topics.enable': 'false',
      });
      // To stdout, which the stack appends to logs/kafka.log.
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
        log('kafka: formatting storage (first start)');
        await runJava(l, 'kafka', 'formatting storage', [
          ...jvm,
          'kafka.tools.StorageTool',
          'format',
          '--cluster-id',
          clusterId(),
          '--config',
          serverProperties,
        ]);
      }
      return { args: ['-Xms1g', '-Xmx1g', ...jvm, 'kafka.Kafka', serverProperties] };
    },
  };
}

/** Kafka's cluster ids are 16 random bytes in URL-safe base64; its tools reject one starting with '-'. */
function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}
