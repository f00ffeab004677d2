import { Kafka, logLevel as KafkaLogLevel, type logCreator } from 'kafkajs';
import type { Logger } from 'pino';
import { GroupKeepingKafka, type RunningGroups } from './consumer-lag.js';

export interface KafkaSettings {
  readonly brokers: readonly string[];
  readonly clientId: string;
}

const levels: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [KafkaLogLevel.ERROR]: 'error',
  [KafkaLogLevel.WARN]: 'warn',
  [KafkaLogLevel.INFO]: 'info',
  [KafkaLogLevel.DEBUG]: 'debug',
};

/**
 * kafkajs logs through our pino logger; its chatty info lines go to debug. So do the error answers
 * of brokers that its connections log (a new topic's partition without a leader yet, a coordinator
 * loading): the request's caller retries them, or reports the failure itself.
 */
export function pinoLogCreator(logger: Logger): logCreator {
  return () => ({ namespace, level, log }) => {
    const { message, ...extra } = log;
    const answered = namespace === 'Connection' && message.startsWith('Response ');
    const target = answered ? 'debug' : (levels[level] ?? 'debug');
    logger[target === 'info' ? 'debug' : target]({ ...extra, namespace }, message);
  };
}

/** With `groups`, the groups of the consumers it makes are kept there, for their lag. */
export function createKafka(settings: KafkaSettings, logger: Logger, groups?: RunningGroups): Kafka {
  const config = {
    clientId: settings.clientId,
    brokers: [...settings.brokers],
    logLevel: KafkaLogLevel.INFO,
    logCreator: pinoLogCreator(logger.child({ component: 'kafka' })),
    retry: { initialRetryTime: 100, retries: 8 },
  };
  return groups ? new GroupKeepingKafka(config, groups) : new Kafka(config);
}
