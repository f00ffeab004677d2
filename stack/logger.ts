import { pino, type Logger } from 'pino';

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

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options = { level, redact: { paths: redactedPaths, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}
