import { Kafka, logLevel as KafkaLogLevel, type Consumer, type ConsumerConfig, type KafkaConfig, type logCreator } from 'kafkajs';
import type { Logger } from 'pino';
import type { RunningGroups } from './consumer-lag.js';
import type { GroupInstances } from './group-instances.js';
import type { GroupMembers } from './group-members.js';
import { groupTiming, type GroupTiming } from './group-timing.js';

export interface KafkaSettings {
  readonly brokers: readonly string[];
  readonly clientId: string;
  /** The consumer groups' session (`KAFKA_SESSION_TIMEOUT_MS`); `groupTiming`'s default unless set. */
  readonly sessionTimeoutMs?: number;
}

const levels: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [KafkaLogLevel.ERROR]: 'error',
  [KafkaLogLevel.WARN]: 'warn',
  [KafkaLogLevel.INFO]: 'info',
  [KafkaLogLevel.DEBUG]: 'debug',
};

/** A consumer's crash because its group's coordinator is loading or has moved, as when a broker has just started. */
const COORDINATOR_MOVING = /^Crash: KafkaJSProtocolError: (The coordinator is loading|The group coordinator is not available|This is not the correct coordinator)/;

/**
 * kafkajs logs through our pino logger; its chatty info lines go to debug. So do the error answers
 * of brokers that its connections log (a new topic's partition without a leader yet, a coordinator
 * loading): the request's caller retries them, or reports the failure itself. A consumer that
 * crashed because its coordinator is loading or moving (every first start of a new broker: its
 * offsets topic loads as the first groups join) is restarted by kafkajs and joins: a warning, as
 * is every restart; other crashes stay errors.
 */
export function pinoLogCreator(logger: Logger): logCreator {
  return () => ({ namespace, level, log }) => {
    const { message, ...extra } = log;
    const answered = namespace === 'Connection' && message.startsWith('Response ');
    const restarted = namespace === 'Consumer' && (COORDINATOR_MOVING.test(message) || message.startsWith('Restarting the consumer'));
    const target = answered ? 'debug' : restarted ? 'warn' : (levels[level] ?? 'debug');
    logger[target === 'info' ? 'debug' : target]({ ...extra, namespace }, message);
  };
}

export interface MemberOptions {
  /** Keeps the group of each consumer while it is connected, for its lag. */
  readonly groups?: RunningGroups;
  /** Makes every consumer a static member of its group (`GATEWAY_INSTANCE_ID`). */
  readonly instances?: GroupInstances;
  /** Keeps the member id of every consumer's latest join, for its removal if this process dies. */
  readonly members?: GroupMembers;
}

/** A Kafka client whose consumers all keep their groups with the same timing and `MemberOptions`. */
class GatewayKafka extends Kafka {
  constructor(
    config: KafkaConfig,
    private readonly timing: GroupTiming,
    private readonly options: MemberOptions,
  ) {
    super(config);
  }

  override consumer(config: ConsumerConfig): Consumer {
    const { groups, instances, members } = this.options;
    const groupInstanceId = instances?.take(config.groupId);
    const consumer = super.consumer({ ...this.timing, ...config, ...(groupInstanceId && { groupInstanceId }) });
    if (instances && groupInstanceId) instances.follow(consumer, config.groupId, groupInstanceId);
    members?.follow(consumer, config.groupId, groupInstanceId);
    if (groups) {
      consumer.on(consumer.events.CONNECT, () => groups.joined(config.groupId));
      consumer.on(consumer.events.DISCONNECT, () => groups.left(config.groupId));
    }
    return consumer;
  }
}

export function createKafka(settings: KafkaSettings, logger: Logger, options: MemberOptions = {}): Kafka {
  const config = {
    clientId: settings.clientId,
    brokers: [...settings.brokers],
    logLevel: KafkaLogLevel.INFO,
    logCreator: pinoLogCreator(logger.child({ component: 'kafka' })),
    retry: { initialRetryTime: 100, retries: 8 },
  };
  return new GatewayKafka(config, groupTiming(settings.sessionTimeoutMs), options);
}
