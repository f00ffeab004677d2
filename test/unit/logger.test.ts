import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../stack/logger.js';
import { pinoLogCreator } from '../../topics/kafka.js';

/** kafkajs' numeric log levels. */
const KAFKA_ERROR = 1;
const KAFKA_INFO = 4;

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, stream };
}

describe('logs', () => {
  it('never carry credentials of requests or secrets of records', () => {
    const { lines, stream } = capture();
    const logger = createLogger('info', 'json', stream);
    logger.info({ req: { headers: { authorization: 'Bearer svc_live_abcdefghijklmnopqrstuvwxyz' } } }, 'request');
    logger.info({ key: { api_key: 'svc_live_zyxwvutsrqponmlkjihgfedcba', secret: 'whsec', code: '123456' } }, 'created');
    const text = lines.join('');
    expect(text).not.toMatch(/svc_live_|whsec|123456/);
    expect(text.match(/\[redacted\]/g)).toHaveLength(4);
  });
});

describe('kafkajs logs', () => {
  const logged = (entry: { namespace: string; level: number; message: string }) => {
    const { lines, stream } = capture();
    const log = pinoLogCreator(createLogger('debug', 'json', stream))(KAFKA_ERROR);
    log({ namespace: entry.namespace, level: entry.level, label: 'ERROR', log: { message: entry.message, timestamp: '', error: 'x' } });
    return (JSON.parse(lines[0]!) as { level: number }).level;
  };

  it('are errors, except a broker answer that the caller retries or reports', () => {
    expect(logged({ namespace: 'Connection', level: KAFKA_ERROR, message: 'Response ListOffsets(key: 2, version: 3)' })).toBe(20);
    expect(logged({ namespace: 'Connection', level: KAFKA_ERROR, message: 'Connection error: connect ECONNREFUSED' })).toBe(50);
    expect(logged({ namespace: 'Consumer', level: KAFKA_ERROR, message: 'Crash: KafkaJSNumberOfRetriesExceeded' })).toBe(50);
    expect(logged({ namespace: 'Consumer', level: KAFKA_INFO, message: 'Starting' })).toBe(20);
  });

  it('are warnings when a consumer crashed on a coordinator loading or moving, and is restarted', () => {
    for (const cause of ["The coordinator is loading and hence can't process requests for this group", 'The group coordinator is not available', 'This is not the correct coordinator for this group']) {
      expect(logged({ namespace: 'Consumer', level: KAFKA_ERROR, message: `Crash: KafkaJSProtocolError: ${cause}` })).toBe(40);
    }
    expect(logged({ namespace: 'Consumer', level: KAFKA_ERROR, message: 'Restarting the consumer in 100ms' })).toBe(40);
    expect(logged({ namespace: 'Consumer', level: KAFKA_ERROR, message: 'Crash: KafkaJSProtocolError: The group member needs to have a valid member id before actually entering a consumer group' })).toBe(50);
  });
});
