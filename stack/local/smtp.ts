import { httpOk } from './health.js';
import type { Layout } from './layout.js';
import { resolveFile } from './maven.js';
import { parseMail } from './mime.js';
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

export interface ReceivedMail {
  subject: string;
  from: string;
  to: string;
  text: string;
}

/** Mail received for `address` since GreenMail started, oldest first. */
export async function readMailbox(address: string): Promise<ReceivedMail[]> {
  const response = await fetch(`${MAIL_API_URL}/api/user/${encodeURIComponent(address)}/messages/INBOX`, {
    signal: AbortSignal.timeout(5000),
  });
  // GreenMail creates a mailbox on its first mail, and answers 400 for one it does not know.
  if (response.status === 400) return [];
  if (!response.ok) throw new Error(`GreenMail answered ${response.status} for the mailbox of ${address}`);
  const messages = (await response.json()) as Array<{ mimeMessage: string }>;
  return messages.map(({ mimeMessage }) => {
    const mail = parseMail(mimeMessage);
    return { subject: mail.header('subject'), from: mail.header('from'), to: mail.header('to'), text: mail.text };
  });
}
