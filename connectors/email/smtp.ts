import type { Transporter } from 'nodemailer';

/** Outgoing e-mail (connect codes, billing notices) over SMTP. */
export interface Mailer {
  send(message: { to: string; subject: string; text: string; html?: string }): Promise<void>;
  /** Throws unless the SMTP server accepts a connection. */
  check(): Promise<void>;
  close(): void;
}

/** The SMTP client is loaded on the first mail or check: most roles send none. */
export function createMailer(smtpUrl: string, from = 'Gateway <no-reply@gateway.local>'): Mailer {
  let opened: Promise<Transporter> | undefined;
  const transport = () => (opened ??= import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(smtpUrl, { from })));
  return {
    async send(message) {
      await (await transport()).sendMail(message);
    },
    async check() {
      await (await transport()).verify();
    },
    close: () => void opened?.then((open) => open.close(), () => undefined),
  };
}
