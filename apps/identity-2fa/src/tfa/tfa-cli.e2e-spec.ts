import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Database } from '@rigmarket/event-sourcing';
import { createPlatformApp } from '@rigmarket/http-kit';
import { InProcessTransport } from '@rigmarket/messaging';
import { IdentityModule } from '../identity.module';
import { RecordingMailer } from '../mailer';
import { startTwilioStandIn } from '../testing/message-stand-ins';
import { totpCode } from './tfa.crypto';

/**
 * The full TOTP flow with the real `vastai` CLI (docs/client-compat.md §2.16).
 * Uses the python of `.infra/vastai-venv` (installed by scripts/vastai-cli.sh, which `npm test` runs), or
 * VASTAI_PYTHON; never skipped. scripts/tfa-cli-acceptance.sh does the same against the built platform.
 */
const PYTHON = process.env.VASTAI_PYTHON ?? join(__dirname, '../../../../.infra/vastai-venv/bin/python');
const ADMIN_KEY = 'tfa-cli-admin-key-0123456789';

describe('vastai tfa commands against identity-2fa (real CLI)', () => {
  let app: INestApplication;
  let db: Database;
  let transport: InProcessTransport;
  const mailer = new RecordingMailer();
  let env: NodeJS.ProcessEnv;
  let twilio: Awaited<ReturnType<typeof startTwilioStandIn>>;

  const vastai = (args: string[], input = ''): Promise<string> =>
    new Promise((resolve) => {
      const child = execFile(
        PYTHON,
        ['-c', 'import sys; sys.argv[0]="vastai"; from vastai.cli.main import main; main()', ...args],
        { env, timeout: 60_000 },
        (_error, stdout, stderr) => resolve(`${stdout}${stderr}`),
      );
      child.stdin?.end(input);
    });
  const totp = (secret: string, steps = 0) => totpCode(secret, new Date(Date.now() + steps * 30_000));

  beforeAll(async () => {
    if (!existsSync(PYTHON))
      throw new Error(`No vastai CLI at ${PYTHON}: run bash scripts/vastai-cli.sh (npm test does)`);
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    transport = new InProcessTransport();
    twilio = await startTwilioStandIn();
    app = await createPlatformApp({
      db,
      transport,
      modules: [
        IdentityModule.forRoot({
          adminKey: ADMIN_KEY,
          mailer,
          tfaKey: 'cd'.repeat(32),
          twilio: {
            accountSid: `AC${'0'.repeat(32)}`,
            authToken: 'token',
            from: '+15005550006',
            baseUrl: twilio.url,
          },
        }),
      ],
    });
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as AddressInfo;
    env = {
      ...process.env,
      VAST_URL: `http://127.0.0.1:${port}`,
      VAST_API_KEY: ADMIN_KEY,
      VASTAI_NO_UPDATE_CHECK: '1',
      HOME: mkdtempSync(join(tmpdir(), 'vast-home-')),
    };
  });
  afterAll(async () => {
    await app?.close();
    await transport?.close();
    await db?.close();
    await twilio?.close();
  });

  it('auth-new -> totp-setup -> activate -> login (TOTP) -> login (backup code) -> delete', async () => {
    const started = await vastai(['tfa', 'auth-new']);
    const secret = /2FA Secret: ([0-9a-f]+)/.exec(started)?.[1];
    expect(secret).toBeDefined();
    const code = /2FA code is (\d{6})/.exec(mailer.sent.at(-1)!.text)![1]!;
    expect(await vastai(['tfa', 'auth-new', '--secret', secret!, '--code', code])).toContain(
      'Successfully authorized',
    );

    const setup = JSON.parse(await vastai(['--raw', 'tfa', 'totp-setup'])) as {
      secret: string;
      provisioning_uri: string;
    };
    expect(setup.provisioning_uri).toMatch(/^otpauth:\/\/totp\//);

    const activated = await vastai(
      ['tfa', 'activate', totp(setup.secret), '--secret', setup.secret, '-t', 'totp', '-l', 'CLI'],
      '3\nyes\n',
    );
    expect(activated).toContain('activated successfully');
    const backup = [...new Set(activated.match(/\b[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}\b/g) ?? [])];
    expect(backup).toHaveLength(10);

    const status = JSON.parse(await vastai(['--raw', 'tfa', 'status'])) as {
      tfa_enabled: boolean;
      methods: { id: number }[];
    };
    expect(status.tfa_enabled).toBe(true);
    const methodId = String(status.methods[0]!.id);

    expect(await vastai(['tfa', 'login', '-t', 'totp', '-c', totp(setup.secret, 1)])).toContain(
      '2FA login successful! Session key saved',
    );
    expect(await vastai(['tfa', 'login', '--backup-code', backup[0]!, '-id', methodId])).toContain(
      'Backup codes remaining: 9',
    );
    const wrong = await vastai(['tfa', 'login', '-t', 'totp', '-c', '000000']);
    expect(wrong).toContain('Failed attempts: 1');

    // A TOTP code newer than the step the login used: wait for the next step boundary.
    await new Promise((r) => setTimeout(r, 31_000 - (Date.now() % 30_000)));
    const deleted = await vastai(
      ['tfa', 'delete', '-id', methodId, '-t', 'totp', '-c', totp(setup.secret, 1)],
      'y\n',
    );
    expect(deleted).toContain('removed all 2FA methods');
    const after = JSON.parse(await vastai(['--raw', 'tfa', 'status'])) as {
      tfa_enabled: boolean;
      methods: unknown[];
    };
    expect(after).toMatchObject({ tfa_enabled: false, methods: [] });
  }, 120_000);
  it('send-sms -> resend-sms -> activate (SMS) -> update (label, primary) -> send-email -> regen-codes', async () => {
    const phone = '+15551230001';
    const lastSmsCode = () => /(\d{6})/.exec(twilio.sent.at(-1)!.body)![1]!;
    const lastMailCode = () => /(\d{6})/.exec(mailer.sent.at(-1)!.text)![1]!;
    const started = await vastai(['tfa', 'auth-new']);
    const authSecret = /2FA Secret: ([0-9a-f]+)/.exec(started)![1]!;
    expect(await vastai(['tfa', 'auth-new', '--secret', authSecret, '--code', lastMailCode()])).toContain(
      'Successfully authorized',
    );

    const sent = await vastai(['tfa', 'send-sms', '--phone-number', phone]);
    expect(sent).toContain('SMS code sent successfully!');
    const secret = /Secret token: (\S+)/.exec(sent)![1]!;
    expect(twilio.sent.at(-1)!.to).toBe(phone);
    const firstCode = lastSmsCode();

    expect(await vastai(['tfa', 'resend-sms', '--secret', secret, '--phone-number', phone])).toContain(
      'SMS code resent successfully!',
    );
    expect(twilio.sent.filter((m) => m.to === phone)).toHaveLength(2);
    const resentCode = lastSmsCode();
    expect(/^\d{6}$/.test(resentCode) && /^\d{6}$/.test(firstCode)).toBe(true);

    const activated = await vastai(
      [
        'tfa',
        'activate',
        resentCode,
        '--secret',
        secret,
        '-t',
        'sms',
        '--phone-number',
        phone,
        '-l',
        'Phone',
      ],
      '3\nyes\n',
    );
    expect(activated).toContain('SMS 2FA method activated successfully');
    const oldBackup = [...new Set(activated.match(/\b[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}\b/g) ?? [])];
    expect(oldBackup).toHaveLength(10);

    type Status = {
      tfa_enabled: boolean;
      methods: { id: number; label: string; is_primary: boolean; method: string }[];
    };
    const status = JSON.parse(await vastai(['--raw', 'tfa', 'status'])) as Status;
    expect(status.methods).toEqual([expect.objectContaining({ label: 'Phone', method: 'sms' })]);
    const methodId = String(status.methods[0]!.id);

    const updated = await vastai([
      'tfa',
      'update',
      methodId,
      '--label',
      'Work phone',
      '--set-primary',
      'true',
    ]);
    expect(updated).toContain('2FA method updated successfully!');
    const after = JSON.parse(await vastai(['--raw', 'tfa', 'status'])) as Status;
    expect(after.methods[0]).toMatchObject({ label: 'Work phone', is_primary: true });

    const mailed = await vastai(['tfa', 'send-email']);
    expect(mailed).toContain('Email code sent successfully!');
    const emailSecret = /Secret token: (\S+)/.exec(mailed)![1]!;
    const regenerated = await vastai(
      ['tfa', 'regen-codes', '-t', 'email', '--secret', emailSecret, '-c', lastMailCode()],
      'y\n3\nyes\n',
    );
    const newBackup = [...new Set(regenerated.match(/\b[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}\b/g) ?? [])];
    expect(newBackup).toHaveLength(10);
    expect(newBackup).not.toContain(oldBackup[0]);
    // The old codes are void, the new ones log in.
    expect(await vastai(['tfa', 'login', '--backup-code', oldBackup[0]!, '-id', methodId])).not.toContain(
      '2FA login successful',
    );
    expect(await vastai(['tfa', 'login', '--backup-code', newBackup[0]!, '-id', methodId])).toContain(
      'Backup codes remaining: 9',
    );
  }, 120_000);
});
