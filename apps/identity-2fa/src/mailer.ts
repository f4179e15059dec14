import { Logger } from '@nestjs/common';
import nodemailer, { type Transporter } from 'nodemailer';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** Outgoing e-mail: SmtpMailer when SMTP_URL is set, LogMailer otherwise. */
export interface Mailer {
  send(mail: Mail): Promise<void>;
}

export const MAILER = Symbol('MAILER');

/** Development mailer: writes each message to the log where an operator can read it. */
export class LogMailer implements Mailer {
  private readonly logger = new Logger('mail');
  async send(mail: Mail): Promise<void> {
    this.logger.log(
      { to: mail.to, subject: mail.subject, text: mail.text },
      'mail (development mailer, not delivered)',
    );
  }
}

/** Keeps messages in memory; tests read what would have been sent. */
export class RecordingMailer implements Mailer {
  readonly sent: Mail[] = [];
  async send(mail: Mail): Promise<void> {
    this.sent.push(mail);
  }
}

/** E-mail over SMTP through nodemailer: `SMTP_URL` (smtp://[user:pass@]host:port, smtps:// for TLS) and `SMTP_FROM`. */
export class SmtpMailer implements Mailer {
  private readonly transport: Transporter;

  constructor(
    url: string,
    private readonly from: string = 'Rigmarket <no-reply@rigmarket.local>',
  ) {
    const parsed = new URL(url);
    this.transport = nodemailer.createTransport({
      host: parsed.hostname,
      port: Number(parsed.port || (parsed.protocol === 'smtps:' ? 465 : 25)),
      secure: parsed.protocol === 'smtps:',
      auth: parsed.username
        ? { user: decodeURIComponent(parsed.username), pass: decodeURIComponent(parsed.password) }
        : undefined,
      // `?tls_verify=false` accepts a relay's self-signed certificate (STARTTLS / smtps).
      tls: { rejectUnauthorized: parsed.searchParams.get('tls_verify') !== 'false' },
    });
  }

  async send(mail: Mail): Promise<void> {
    await this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text });
  }

  static fromEnv(env: NodeJS.ProcessEnv = process.env): SmtpMailer | null {
    return env.SMTP_URL ? new SmtpMailer(env.SMTP_URL, env.SMTP_FROM || undefined) : null;
  }
}
