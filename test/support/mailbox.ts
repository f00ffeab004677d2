import { simpleParser } from 'mailparser';
import { request } from 'undici';
import { MAIL_API_URL } from '../../stack/local/smtp.js';

export interface ReceivedMail {
  readonly subject: string;
  /** Sender address. */
  readonly from: string;
  /** Recipient addresses, comma-separated. */
  readonly to: string;
  readonly text: string;
}

/** Mail the local SMTP server (GreenMail) received for `address`, oldest first. */
export async function readMailbox(address: string): Promise<ReceivedMail[]> {
  const response = await request(`${MAIL_API_URL}/api/user/${encodeURIComponent(address)}/messages/INBOX`, {
    headersTimeout: 5_000,
  });
  // GreenMail creates a mailbox on its first mail and answers 400 for one it does not know.
  if (response.statusCode === 400) {
    await response.body.dump();
    return [];
  }
  if (response.statusCode !== 200) throw new Error(`GreenMail answered ${response.statusCode} for ${address}`);
  const messages = (await response.body.json()) as Array<{ mimeMessage: string }>;
  return Promise.all(
    messages.map(async ({ mimeMessage }) => {
      const mail = await simpleParser(mimeMessage);
      const to = (Array.isArray(mail.to) ? mail.to : mail.to ? [mail.to] : []).flatMap((a) => a.value.map((v) => v.address ?? ''));
      return { subject: mail.subject ?? '', from: mail.from?.value[0]?.address ?? '', to: to.join(', '), text: (mail.text ?? '').trim() };
    }),
  );
}
