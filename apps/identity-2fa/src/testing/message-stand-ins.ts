import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** Local stand-ins for the services identity sends codes through (tests only): a real SMTP server and Twilio's REST API. */

/** A number the Twilio stand-in always refuses, as Twilio refuses an invalid 'To'. */
export const FAILING_PHONE = '+15005550001';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** A real SMTP server on loopback; the app's SmtpMailer (nodemailer) delivers to it. */
export async function startSmtp(): Promise<{ url: string; mails: Mail[]; close(): Promise<void> }> {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          const to = Array.isArray(parsed.to)
            ? parsed.to.map((a) => a.text).join(',')
            : (parsed.to?.text ?? '');
          mails.push({ to, subject: parsed.subject ?? '', text: parsed.text ?? '' });
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Stand-in for Twilio's Messages REST endpoint: records what was sent; one number always fails. */
export async function startTwilioStandIn(): Promise<{
  url: string;
  sent: { to: string; from: string; body: string; auth: string }[];
  close(): Promise<void>;
}> {
  const sent: { to: string; from: string; body: string; auth: string }[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const match = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(req.url ?? '');
      res.setHeader('Content-Type', 'application/json');
      if (req.method !== 'POST' || !match) {
        res.statusCode = 404;
        res.end(JSON.stringify({ code: 20404, message: 'Not found', status: 404 }));
        return;
      }
      const form = new URLSearchParams(raw);
      const to = form.get('To') ?? '';
      if (to === FAILING_PHONE) {
        res.statusCode = 400;
        res.end(
          JSON.stringify({
            code: 21211,
            message: `The 'To' number ${to} is not a valid phone number.`,
            status: 400,
            more_info: 'https://www.twilio.com/docs/errors/21211',
          }),
        );
        return;
      }
      sent.push({
        to,
        from: form.get('From') ?? '',
        body: form.get('Body') ?? '',
        auth: req.headers.authorization ?? '',
      });
      res.statusCode = 201;
      res.end(
        JSON.stringify({
          sid: `SM${sent.length.toString().padStart(32, '0')}`,
          account_sid: match[1],
          to,
          from: form.get('From'),
          body: form.get('Body'),
          status: 'queued',
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sent,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
