import { Logger } from '@nestjs/common';
import type { Transporter } from 'nodemailer';

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

/**
 * Whether the development mailer and SMS sender may write message texts (verification tokens, 2FA codes)
 * to the log: only where the operator asked for it with RIGMARKET_LOG_MESSAGES=1.
 */
export function logsMessageTexts(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.RIGMARKET_LOG_MESSAGES === '1' || env.RIGMARKET_LOG_MESSAGES === 'true';
}

/**
 * Development mailer (no SMTP_URL): nothing is delivered. By default it logs only that a message was not
 * delivered (recipient and subject), never its text, which carries codes and tokens; with
 * RIGMARKET_LOG_MESSAGES=1 it logs the text too, for a developer who reads codes from the log.
 */
export class LogMailer implements Mailer {
  private readonly logger = new Logger('mail');
  constructor(private readonly logTexts: boolean = logsMessageTexts()) {}

  async send(mail: Mail): Promise<void> {
    if (this.logTexts) {
      this.logger.log(
        { to: mail.to, subject: mail.subject, text: mail.text },
        'mail (development mailer, not delivered)',
      );
      return;
    }
    this.logger.warn(
      { to: mail.to, subject: mail.subject },
      'mail not delivered: no SMTP_URL (RIGMARKET_LOG_MESSAGES=1 logs the text)',
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
    // Loaded here, not at start: without SMTP_URL nothing needs nodemailer (about 12 MB and 0.3 s to load).
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see above
    const nodemailer = require('nodemailer') as typeof import('nodemailer');
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
