import { Logger } from '@nestjs/common';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** Outgoing e-mail. SMTP delivery (nodemailer) arrives with the 2FA work; until then mail is logged. */
export interface Mailer {
  send(mail: Mail): Promise<void>;
}

export const MAILER = Symbol('MAILER');

/** Development mailer: writes each message to the log where an operator can read it. */
export class LogMailer implements Mailer {
  private readonly logger = new Logger('mail');
  async send(mail: Mail): Promise<void> {
    this.logger.log({ to: mail.to, subject: mail.subject, text: mail.text }, 'mail (development mailer, not delivered)');
  }
}

/** Keeps messages in memory; tests read what would have been sent. */
export class RecordingMailer implements Mailer {
  readonly sent: Mail[] = [];
  async send(mail: Mail): Promise<void> {
    this.sent.push(mail);
  }
}
