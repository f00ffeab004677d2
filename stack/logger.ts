import { pino, type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';

/** Paths that may hold secrets: they are replaced before a line is written. */
export const redactedPaths = [
  'req.headers.authorization',
  'req.headers["x-connect-session"]',
  'req.headers.cookie',
  'req.query.session',
  '*.api_key',
  '*.secret',
  '*.password',
  '*.token',
  '*.session_token',
  '*.code',
];

export type LogFormat = 'json' | 'pretty';

/** JSON lines for machines; readable lines when a person watches a terminal. */
export function createLogger(level: string, format: LogFormat, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: redactedPaths, censor: '[redacted]' } };
  if (destination) return pino(options, destination);
  return format === 'pretty' ? pino(options, pretty({ colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' })) : pino(options);
}
