import { httpOk } from './health.js';
import type { Layout } from './layout.js';
import { resolveFile } from './maven.js';
import type { JvmService, Log } from './processes.js';

export const GREENMAIL_VERSION = '2.1.13';
export const SMTP_HOST = '127.0.0.1';
export const SMTP_PORT = 1025;
/** GreenMail's REST API, where tests read what was sent. */
export const MAIL_API_URL = 'http://127.0.0.1:8025';

/** GreenMail: SMTP accepting any user and any recipient, mailboxes kept in memory. */
export function smtpService(): JvmService {
  return {
    name: 'smtp',
    address: `smtp://${SMTP_HOST}:${SMTP_PORT}`,
    ports: [
      { host: SMTP_HOST, port: SMTP_PORT },
      { host: '127.0.0.1', port: 8025 },
    ],
    startTimeoutMs: 60_000,
    stopTimeoutMs: 10_000,
    probe: () => httpOk(`${MAIL_API_URL}/api/service/readiness`),
    async prepare(l: Layout, log: Log) {
      const jar = await resolveFile(l.cache, `com.icegreen:greenmail-standalone:${GREENMAIL_VERSION}`, log);
      return {
        args: [
          '-Xmx128m',
          `-Dgreenmail.smtp.hostname=${SMTP_HOST}`,
          `-Dgreenmail.smtp.port=${SMTP_PORT}`,
          '-Dgreenmail.api.hostname=127.0.0.1',
          '-Dgreenmail.api.port=8025',
          '-Dgreenmail.auth.disabled',
          '-jar',
          jar,
        ],
      };
    },
  };
}
