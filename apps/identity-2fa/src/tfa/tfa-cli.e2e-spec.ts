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
    app = await createPlatformApp({
      db,
      transport,
      modules: [IdentityModule.forRoot({ adminKey: ADMIN_KEY, mailer, tfaKey: 'cd'.repeat(32) })],
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
});
