import nodemailer, { type Transporter } from 'nodemailer';

/** Outgoing e-mail (connect codes, billing notices) over SMTP. */
export interface Mailer {
  send(message: { to: string; subject: string; text: string; html?: string }): Promise<void>;
  /** Throws unless the SMTP server accepts a connection. */
  check(): Promise<void>;
  close(): void;
}

export function createMailer(smtpUrl: string, from = 'Gateway <no-reply@gateway.local>'): Mailer {
  const transport: Transporter = nodemailer.createTransport(smtpUrl, { from });
  return {
    async send(message) {
      await transport.sendMail(message);
    },
    async check() {
      await transport.verify();
    },
    close: () => transport.close(),
  };
}
