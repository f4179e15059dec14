import { Logger } from '@nestjs/common';
import { chooseMailer, chooseSms } from '../identity.module';
import { LogMailer, RecordingMailer, SmtpMailer } from '../mailer';
import { LogSmsSender, TwilioSmsSender } from './sms';

describe('delivery adapters are chosen from configuration', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('SMTP_URL selects the SMTP mailer; without it mail goes to the log; an injected mailer wins', () => {
    delete process.env.SMTP_URL;
    expect(chooseMailer({})).toBeInstanceOf(LogMailer);
    process.env.SMTP_URL = 'smtp://user:pass@127.0.0.1:2525';
    expect(chooseMailer({})).toBeInstanceOf(SmtpMailer);
    expect(chooseMailer({ smtpUrl: 'smtp://127.0.0.1:25' })).toBeInstanceOf(SmtpMailer);
    const recording = new RecordingMailer();
    expect(chooseMailer({ mailer: recording })).toBe(recording);
  });

  it('TWILIO_* select the Twilio adapter; without them SMS go to the development provider', () => {
    delete process.env.TWILIO_ACCOUNT_SID;
    expect(chooseSms({})).toBeInstanceOf(LogSmsSender);
    Object.assign(process.env, {
      TWILIO_ACCOUNT_SID: `AC${'1'.repeat(32)}`,
      TWILIO_AUTH_TOKEN: 't',
      TWILIO_FROM: '+15005550006',
    });
    expect(chooseSms({})).toBeInstanceOf(TwilioSmsSender);
  });

  it('the development SMS provider keeps what it would have sent', async () => {
    const sms = new LogSmsSender();
    await sms.send('+14155550100', 'code 123456');
    expect(sms.sent).toEqual([{ to: '+14155550100', body: 'code 123456' }]);
  });

  it('the development mailer and SMS provider never log codes unless RIGMARKET_LOG_MESSAGES=1 asks for it', async () => {
    const written: string[] = [];
    const record = (...args: unknown[]) => void written.push(JSON.stringify(args));
    const spies = [
      jest.spyOn(Logger.prototype, 'log').mockImplementation(record),
      jest.spyOn(Logger.prototype, 'warn').mockImplementation(record),
      jest.spyOn(Logger.prototype, 'debug').mockImplementation(record),
    ];
    try {
      delete process.env.RIGMARKET_LOG_MESSAGES;
      const mail = { to: 'a@example.com', subject: 'Your code', text: 'Your 2FA code is 314159' };
      await new LogMailer().send(mail);
      await new LogSmsSender().send('+14155550100', 'code 271828');
      expect(written.length).toBe(2);
      expect(written.join('\n')).toContain('a@example.com');
      expect(written.join('\n')).not.toMatch(/314159|271828/);

      written.length = 0;
      process.env.RIGMARKET_LOG_MESSAGES = '1';
      await new LogMailer().send(mail);
      await new LogSmsSender().send('+14155550100', 'code 271828');
      expect(written.join('\n')).toMatch(/314159[^]*271828/);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });
});
