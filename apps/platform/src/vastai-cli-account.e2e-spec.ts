import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { INestApplication } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { type ContextRuntime, Database } from '@rigmarket/event-sourcing';
import { IDENTITY_RUNTIME, RecordingMailer } from '@rigmarket/identity-2fa';
import { INSTANCE_RUNTIME, SimulatedHostDriver } from '@rigmarket/instance-lifecycle';
import { ChargeUsageCommand, MARKETPLACE_RUNTIME, ledgerImbalances } from '@rigmarket/marketplace-api';
import { InProcessTransport } from '@rigmarket/messaging';
import { eventually, settledRebuildMismatches } from '@rigmarket/testing';
import request from 'supertest';
import { createEmbeddedApp } from './platform';
import { HOST_HARDWARE, LIST_MACHINE_ASK } from './testing/fixtures';
import { verifiedUser } from './testing/users';

const run = promisify(execFile);
const CLI = join(__dirname, '../../../.infra/vastai-venv/bin/vastai');
const ADMIN_KEY = 'cli-account-admin-key';

/**
 * The real `vastai` CLI's account and billing commands (issue 14) against the embedded platform. The CLI
 * exits 0 on most HTTP errors, so every test reads its output, and checks each command's effect with a
 * follow-up command.
 */
describe('the vastai CLI: account and billing commands', () => {
  let app: INestApplication;
  let db: Database;
  let port: number;
  const mailer = new RecordingMailer();
  const home = mkdtempSync(join(tmpdir(), 'vast-account-home-'));
  let sender: { key: string; id: number; email: string };
  let recipient: { key: string; id: number; email: string };

  const vastai = async (key: string, ...args: string[]) => {
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      VAST_URL: `http://127.0.0.1:${port}`,
      VASTAI_NO_UPDATE_CHECK: '1',
      VAST_API_KEY: key,
    };
    const { stdout, stderr } = await run(CLI, args, { env, timeout: 60_000 });
    return { stdout, stderr, out: stdout + stderr };
  };
  const http = () => request(app.getHttpServer());
  const user = async (key: string) =>
    JSON.parse((await vastai(key, 'show', 'user', '--raw')).stdout) as {
      id: number;
      email: string;
      credit: number;
    };
  /** Waits (over HTTP) until the account shows `credit`, then reads it with the CLI's `show user`. */
  const creditOf = async (key: string, credit: number) => {
    await eventually(
      async () => {
        const shown = await http()
          .get('/api/v0/users/current/')
          .set({ Authorization: `Bearer ${key}` });
        return shown.body.credit === credit ? true : undefined;
      },
      30_000,
      `credit ${credit}`,
    );
    expect((await user(key)).credit).toBe(credit);
  };

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    app = await createEmbeddedApp({
      db,
      transport: new InProcessTransport(),
      identity: { adminKey: ADMIN_KEY, mailer },
      marketplace: { billingIntervalMs: 0 },
    });
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as { port: number }).port;
    const person = async (prefix: string) => {
      const key = await verifiedUser(app.getHttpServer(), mailer, prefix, ['/api/v0/users/me/credit/']);
      const { id, email } = await user(key);
      return { key, id, email };
    };
    sender = await person('sender');
    recipient = await person('recipient');
    await http()
      .post('/api/v0/credit/')
      .set({ Authorization: `Bearer ${ADMIN_KEY}` })
      .send({ user_id: sender.id, amount: 10 })
      .expect(200);
    await creditOf(sender.key, 10);
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it('transfer credit: moves credit to another account by e-mail or id; the balances show it', async () => {
    const sent = await vastai(sender.key, 'transfer', 'credit', recipient.email, '2.5', '--skip');
    expect(sent.out).toContain(`Sent 2.5 to ${recipient.email}`);
    await creditOf(recipient.key, 2.5);
    expect((await user(sender.key)).credit).toBe(7.5);

    const byId = await vastai(
      sender.key,
      'transfer',
      'credit',
      '-r',
      String(recipient.id),
      '-a',
      '0.25',
      '--skip',
    );
    expect(byId.out).toContain(`Sent 0.25 to ${recipient.id}`);
    await creditOf(recipient.key, 2.75);
    expect((await user(sender.key)).credit).toBe(7.25);
  });

  it('transfer credit: refuses more than the balance, an unknown recipient and oneself, moving nothing', async () => {
    const tooMuch = await vastai(sender.key, 'transfer', 'credit', recipient.email, '1000', '--skip');
    expect(tooMuch.out).toContain('402');
    const nobody = await vastai(sender.key, 'transfer', 'credit', 'nobody@example.com', '1', '--skip');
    expect(nobody.out).toContain('404');
    const self = await vastai(sender.key, 'transfer', 'credit', sender.email, '1', '--skip');
    expect(self.out).toContain('400');
    expect((await user(sender.key)).credit).toBe(7.25);
    expect((await user(recipient.key)).credit).toBe(2.75);
  });

  it('show invoices-v1 -i: the credit granted and the transfers, in a table and raw', async () => {
    const table = await vastai(sender.key, 'show', 'invoices-v1', '-i', '--no-color');
    expect(table.out).toContain('Showing 3 of 3 results');
    expect(table.out).toMatch(/Credit/);
    expect(table.out).toContain('Transfer');
    expect(table.out).toContain('-$2.50');
    const raw = JSON.parse((await vastai(recipient.key, 'show', 'invoices-v1', '-i', '--raw')).stdout);
    expect(raw).toMatchObject({ count: 2, total: 2, next_token: null });
    expect(raw.results.map((r: { type: string; amount: number }) => [r.type, r.amount])).toEqual([
      ['transfer', 2.5],
      ['transfer', 0.25],
    ]);
    const paged = JSON.parse(
      (await vastai(sender.key, 'show', 'invoices-v1', '-i', '-l', '1', '--raw')).stdout,
    );
    expect(paged).toMatchObject({ count: 1, total: 3 });
    const next = JSON.parse(
      (await vastai(sender.key, 'show', 'invoices-v1', '-i', '-l', '1', '-t', paged.next_token, '--raw'))
        .stdout,
    );
    expect(next.results[0].id).not.toBe(paged.results[0].id);
  });

  it('search invoices: filters the invoices with the query language', async () => {
    const all = JSON.parse((await vastai(sender.key, 'search', 'invoices', '--raw')).stdout);
    const cents = all.invoices.map((i: { amount_cents: number }) => i.amount_cents);
    expect(cents.sort((a: number, b: number) => a - b)).toEqual([-250, -25, 1000]);
    const big = await vastai(sender.key, 'search', 'invoices', 'amount_cents>300');
    const rows = JSON.parse(big.stdout).invoices as Array<{ service: string; amount: number }>;
    expect(rows).toEqual([expect.objectContaining({ service: 'credit', amount: 10, is_credit: true })]);
    const transfers = JSON.parse((await vastai(sender.key, 'search', 'invoices', 'service=transfer')).stdout);
    expect(transfers.invoices).toHaveLength(2);
  });

  it('show invoices-v1 -c: the instance charges of the week, with their instance', async () => {
    const now = Date.now();
    const hour = 3_600_000;
    const bus = app.get(CommandBus);
    // Two consecutive hours of instance 77 (a period is charged once, whatever its kind).
    for (const [kind, micros, hoursAgo] of [
      ['gpu', 900_000, 2],
      ['storage', 10_000, 1],
    ] as const) {
      await bus.execute(
        new ChargeUsageCommand(
          sender.id,
          1,
          77,
          5,
          kind,
          micros,
          new Date(now - hoursAgo * hour).toISOString(),
          new Date(now - (hoursAgo - 1) * hour).toISOString(),
          { correlationId: 'cli-account', causationId: 'cli-account' },
        ),
      );
    }
    const table = await vastai(sender.key, 'show', 'invoices-v1', '-c', '--no-color');
    expect(table.out).toContain('Showing 2 of 2 results');
    expect(table.out).toContain('$0.900');
    expect(table.out).toContain('77');
    const raw = JSON.parse((await vastai(sender.key, 'show', 'invoices-v1', '-c', '--raw')).stdout);
    expect(raw.results.map((r: { source: string; amount: number }) => [r.source, r.amount])).toEqual([
      ['instance-77', 0.9],
      ['instance-77', 0.01],
    ]);
    const none = await vastai(sender.key, 'show', 'invoices-v1', '-c', '-ct', 'volume', '--no-color');
    expect(none.out).toContain('No results found');
    await creditOf(sender.key, 6.34);
  });

  it('create, show, update and delete env-var: the value is shown only when asked, and only to its account', async () => {
    const created = await vastai(sender.key, 'create', 'env-var', 'HF_TOKEN', 'hf-secret-value-1');
    expect(created.out).toContain('Environment variable HF_TOKEN created.');
    const hidden = await vastai(sender.key, 'show', 'env-vars');
    expect(hidden.out).toContain('Name: HF_TOKEN');
    expect(hidden.out).not.toContain('hf-secret-value-1');
    expect((await vastai(sender.key, 'show', 'env-vars', '-s')).out).toContain('Value: hf-secret-value-1');
    // another account sees none of them, and cannot change or delete them
    expect((await vastai(recipient.key, 'show', 'env-vars', '-s')).out).toContain(
      'No environment variables found.',
    );
    expect((await vastai(recipient.key, 'delete', 'env-var', 'HF_TOKEN')).out).toContain('404');
    expect((await vastai(sender.key, 'create', 'env-var', 'HF_TOKEN', 'again')).out).toContain('409');
    expect((await vastai(sender.key, 'create', 'env-var', '1BAD', 'x')).out).toContain('400');

    const updated = await vastai(sender.key, 'update', 'env-var', 'HF_TOKEN', 'hf-secret-value-2');
    expect(updated.out).toContain('Environment variable HF_TOKEN updated.');
    expect((await vastai(sender.key, 'show', 'env-vars', '-s')).out).toContain('Value: hf-secret-value-2');
    await vastai(sender.key, 'create', 'env-var', 'TO_DELETE', 'x');
    expect((await vastai(sender.key, 'delete', 'env-var', 'TO_DELETE')).out).toContain(
      'Environment variable TO_DELETE deleted.',
    );
    const raw = JSON.parse(
      (await vastai(sender.key, 'show', 'env-vars', '-s', '--raw')).stdout.split('\n\nNote')[0]!,
    );
    expect(raw).toEqual({ HF_TOKEN: 'hf-secret-value-2' });
  });

  it("env vars reach the env of the account's new instances, sealed everywhere else", async () => {
    const admin = { Authorization: `Bearer ${ADMIN_KEY}` };
    const machine = await http().post('/api/v0/machines/').set(admin).send(HOST_HARDWARE).expect(201);
    const machineId = machine.body.machine_id as number;
    await http()
      .put('/api/v0/machines/create_asks/')
      .set(admin)
      .send({ machine: machineId, ...LIST_MACHINE_ASK })
      .expect(200);
    await http()
      .put(`/api/v0/machines/${machineId}/verification/`)
      .set(admin)
      .send({ verification: 'verified' });
    const offer = machineId * 1000 + 1;
    await eventually(
      async () =>
        (
          await http()
            .put(`/api/v0/asks/${offer}/`)
            .set({ Authorization: `Bearer ${sender.key}` })
            .send({ image: 'x', price: 0.01 })
        ).status === 400
          ? true
          : undefined,
      30_000,
      'the machine in instance-lifecycle',
    );
    const created = await vastai(
      sender.key,
      'create',
      'instance',
      String(offer),
      '--image',
      'busybox',
      '--env',
      '-e TZ=UTC -e HF_TOKEN=from-the-instance',
      '--raw',
    );
    const id = (JSON.parse(created.stdout) as { new_contract: number }).new_contract;
    const provisioned = await eventually(
      async () => app.get(SimulatedHostDriver).provisioned(id),
      30_000,
      'the provision',
    );
    await vastai(sender.key, 'create', 'env-var', 'EXTRA', 'extra-secret-value');
    // Read when the instance was provisioned: the account's HF_TOKEN yields to the instance's own.
    expect(provisioned.config.env).toMatchObject({ TZ: 'UTC', HF_TOKEN: 'from-the-instance' });
    const second = await vastai(
      sender.key,
      'create',
      'instance',
      String(offer),
      '--image',
      'busybox',
      '--raw',
    );
    const secondId = (JSON.parse(second.stdout) as { new_contract: number }).new_contract;
    const env = (
      await eventually(
        async () => app.get(SimulatedHostDriver).provisioned(secondId),
        30_000,
        'the provision',
      )
    ).config.env;
    expect(env).toMatchObject({ HF_TOKEN: 'hf-secret-value-2', EXTRA: 'extra-secret-value' });
    const shown = JSON.parse(
      (await vastai(sender.key, 'show', 'instance', String(secondId), '--raw')).stdout,
    );
    expect(JSON.stringify(shown)).not.toContain('secret-value');
    for (const schema of ['identity', 'marketplace', 'instance_lifecycle', 'sync_maintenance']) {
      const [found] = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${schema}.events WHERE data::text LIKE '%secret-value%'`,
      );
      expect({ schema, n: found?.n }).toEqual({ schema, n: 0 });
    }
    for (const instance of [id, secondId])
      expect((await vastai(sender.key, 'destroy', 'instance', String(instance), '-y')).out).not.toContain(
        'Failed',
      );
  });

  it('show ipaddrs: the addresses the account acted from; its transfers are in its audit log', async () => {
    const rows = JSON.parse((await vastai(sender.key, 'show', 'ipaddrs', '--raw')).stdout) as Array<{
      ip: string;
      first_seen: number;
      actions: number;
    }>;
    expect(rows).toEqual([expect.objectContaining({ ip: expect.stringMatching(/127\.0\.0\.1/) })]);
    expect(rows[0]!.actions).toBeGreaterThanOrEqual(3);
    const table = await vastai(sender.key, 'show', 'ipaddrs');
    expect(table.out).toContain('first_seen');
    expect(table.out).toMatch(/127\.0\.0\.1/);
    const audit = JSON.parse((await vastai(sender.key, 'show', 'audit-logs', '--raw')).stdout) as Array<{
      action: string;
      args: Record<string, unknown>;
    }>;
    expect(audit.filter((a) => a.action === 'CreditTransferred').map((a) => a.args)).toEqual([
      expect.objectContaining({ recipientId: recipient.id, amountMicros: 250_000 }),
      expect.objectContaining({ recipientId: recipient.id, amountMicros: 2_500_000 }),
    ]);
  });

  it("over HTTP, refuses malformed, unbounded and other accounts' requests with the Error object", async () => {
    const as = (key: string) => ({ Authorization: `Bearer ${key}` });
    const refused = async (call: request.Test, status: number, error: string): Promise<void> => {
      const answer = await call;
      expect({ status: answer.status, body: answer.body }).toMatchObject({
        status,
        body: { success: false, error, msg: expect.any(String) },
      });
    };
    const transfer = (body: unknown) =>
      http()
        .put('/api/v0/commands/transfer_credit/')
        .set(as(sender.key))
        .send(body as object);
    await refused(
      transfer({ sender: recipient.id, recipient: recipient.email, amount: 1 }),
      403,
      'forbidden',
    );
    await refused(transfer({ recipient: recipient.email, amount: 'a lot' }), 400, 'invalid_amount');
    await refused(transfer({ recipient: recipient.email, amount: -1 }), 400, 'invalid_amount');
    await refused(transfer({ recipient: recipient.email, amount: 1_000_001 }), 400, 'invalid_amount');
    await refused(transfer({ recipient: 'x'.repeat(300), amount: 1 }), 400, 'bad_request');
    await refused(transfer({ amount: 1 }), 400, 'bad_request');
    await refused(http().put('/api/v0/commands/transfer_credit/').send({}), 401, 'missing_key');

    const secrets = () => http().post('/api/v0/secrets/').set(as(recipient.key));
    await refused(secrets().send({ key: 'BAD NAME', value: 'x' }), 400, 'bad_request');
    await refused(secrets().send({ key: 'A'.repeat(129), value: 'x' }), 400, 'bad_request');
    await refused(secrets().send({ key: 'BIG', value: 'x'.repeat(4097) }), 400, 'bad_request');
    await refused(secrets().send({ key: 'NO_VALUE' }), 400, 'bad_request');
    await refused(
      http().put('/api/v0/secrets/').set(as(recipient.key)).send({ key: 'HF_TOKEN', value: 'mine now' }),
      404,
      'env_var_not_found',
    );
    await refused(http().get('/api/v0/secrets/'), 401, 'missing_key');
    // the sender's variable is untouched by the other account's attempts
    const own = await http().get('/api/v0/secrets/').set(as(sender.key)).expect(200);
    expect(own.body.secrets.HF_TOKEN).toBe('hf-secret-value-2');

    await refused(http().get('/api/v1/invoices/?limit=101').set(as(sender.key)), 400, 'bad_request');
    await refused(
      http().get('/api/v0/charges/?after_token=not-ours').set(as(sender.key)),
      400,
      'bad_request',
    );
    await refused(
      http()
        .get(`/api/v0/invoices?select_filters=${encodeURIComponent('{"balance_before":{"gt":1}}')}`)
        .set(as(sender.key)),
      400,
      'bad_request',
    );
    // another account's history is not reachable: the recipient's pages hold only its own rows
    const theirs = await http().get('/api/v0/charges/').set(as(recipient.key)).expect(200);
    expect(theirs.body).toMatchObject({ total: 0, results: [] });
  });

  it('set user: saves the name, billing address and thresholds; show user reads them back', async () => {
    const file = join(home, 'user-settings.json');
    writeFileSync(
      file,
      JSON.stringify({
        fullname: 'Ada Sender',
        billaddress_addr1: '1 rue des Puces',
        billaddress_city: 'Lyon',
        billaddress_country: 'FR',
        phone_number: '+33 1 23 45 67 89',
        balance_threshold_enabled: true,
        balance_threshold: 2.5,
        // What `show user --raw` prints besides: ignored, so a saved file can be edited and sent back.
        id: 999_999,
        credit: 1_000_000,
      }),
    );
    const saved = await vastai(sender.key, 'set', 'user', '--file', file);
    expect(saved.out).toContain('Ada Sender');
    const shown = JSON.parse((await vastai(sender.key, 'show', 'user', '--raw')).stdout) as Record<
      string,
      unknown
    >;
    expect(shown).toMatchObject({
      id: sender.id,
      fullname: 'Ada Sender',
      billaddress_line1: '1 rue des Puces',
      billaddress_city: 'Lyon',
      billaddress_country: 'FR',
      phone_number: '+33 1 23 45 67 89',
      balance_threshold_enabled: true,
      balance_threshold: 2.5,
    });
    expect(shown.credit).not.toBe(1_000_000);
    const as = { Authorization: `Bearer ${sender.key}` };
    const refused = await http().put('/api/v0/users/').set(as).send({ phone_number: 'call me' });
    expect({ status: refused.status, error: refused.body.error }).toEqual({
      status: 400,
      error: 'bad_request',
    });
    const empty = await http().put('/api/v0/users/').set(as).send({ credit: 5 });
    expect({ status: empty.status, error: empty.body.error }).toEqual({
      status: 400,
      error: 'no_settable_field',
    });
    const unchanged = await http().get('/api/v0/users/current/').set(as);
    expect(unchanged.body.phone_number).toBe('+33 1 23 45 67 89');
    const other = await http()
      .get('/api/v0/users/current/')
      .set({ Authorization: `Bearer ${recipient.key}` });
    expect(other.body).toMatchObject({ fullname: null, billaddress_city: null, phone_number: null });
  });

  it('create subaccount: a child of the calling account, listed by show subaccounts for its parent only', async () => {
    const created = await vastai(
      sender.key,
      'create',
      'subaccount',
      '--email',
      'child-host@example.com',
      '--username',
      'childhost',
      '--password',
      'child-password-1',
      '--type',
      'host',
    );
    expect(created.out).toContain('child-host@example.com');
    const children = JSON.parse((await vastai(sender.key, 'show', 'subaccounts', '--raw')).stdout) as Array<
      Record<string, unknown>
    >;
    expect(children).toEqual([
      expect.objectContaining({ email: 'child-host@example.com', parent_id: sender.id, host_only: true }),
    ]);
    const table = await vastai(sender.key, 'show', 'subaccounts');
    expect(table.out).toContain('child-host@example.com');
    expect(JSON.parse((await vastai(recipient.key, 'show', 'subaccounts', '--raw')).stdout)).toEqual([]);

    // The child logs in with its own password; a subaccount cannot have subaccounts of its own.
    const login = await http()
      .post('/api/v0/users/login/')
      .send({ username: 'child-host@example.com', password: 'child-password-1' });
    expect(login.status).toBe(200);
    const grandchild = await http()
      .post('/api/v0/users/')
      .set({ Authorization: `Bearer ${login.body.session_key}` })
      .send({ email: 'grandchild@example.com', password: 'grandchild-pw-1', parent_id: 'me' });
    expect({ status: grandchild.status, error: grandchild.body.error }).toEqual({
      status: 403,
      error: 'forbidden',
    });
    // No key, or another account named as the parent: refused, nothing created.
    const anonymous = await http()
      .post('/api/v0/users/')
      .send({ email: 'orphan@example.com', password: 'orphan-password', parent_id: 'me' });
    expect({ status: anonymous.status, error: anonymous.body.error }).toEqual({
      status: 401,
      error: 'missing_key',
    });
    const foreign = await http()
      .post('/api/v0/users/')
      .set({ Authorization: `Bearer ${sender.key}` })
      .send({ email: 'stolen@example.com', password: 'stolen-password', parent_id: String(recipient.id) });
    expect({ status: foreign.status, error: foreign.body.error }).toEqual({
      status: 403,
      error: 'forbidden',
    });
    const after = JSON.parse((await vastai(sender.key, 'show', 'subaccounts', '--raw')).stdout) as unknown[];
    expect(after).toHaveLength(1);
    const audit = JSON.parse((await vastai(sender.key, 'show', 'audit-logs', '--raw')).stdout) as Array<{
      action: string;
    }>;
    expect(audit.map((a) => a.action)).toEqual(
      expect.arrayContaining(['SubaccountRegistered', 'UserSettingsChanged']),
    );
  });

  it('teams: create, invite, join, show and remove members, destroy; the team owns what its keys create', async () => {
    const as = (key: string) => ({ Authorization: `Bearer ${key}` });
    const keyIn = (text: string) => /'api_key': '([0-9a-f]{64})'/.exec(text)?.[1];
    const created = await vastai(sender.key, 'create', 'team', '--team-name', 'render lab');
    const ownerTeamKey = keyIn(created.out);
    const teamId = Number(/'team_id': (\d+)/.exec(created.out)?.[1]);
    expect(ownerTeamKey).toBeDefined();
    // The team is an account of its own: a team key's `show user` is the team.
    const teamUser = JSON.parse((await vastai(ownerTeamKey!, 'show', 'user', '--raw')).stdout) as {
      id: number;
    };
    expect(teamUser.id).toBe(teamId);
    const credit = await http()
      .post('/api/v0/team/')
      .set(as(sender.key))
      .send({ team_name: 'rich', transfer_credit: 5 });
    expect({ status: credit.status, error: credit.body.error }).toEqual({
      status: 400,
      error: 'transfer_credit_not_supported',
    });

    const invited = await vastai(
      sender.key,
      'invite',
      'member',
      '--email',
      recipient.email,
      '--role',
      'member',
    );
    expect(invited.out).toContain(`successfully invited ${recipient.email}`);
    const mail = mailer.sent.filter((m) => m.to === recipient.email).at(-1)!;
    const token = /invitation code is (\S+)/.exec(mail.text)![1]!;
    const wrong = await http()
      .post('/api/v0/team/join/')
      .set(as(sender.key))
      .send({ team_id: teamId, token });
    expect({ status: wrong.status, error: wrong.body.error }).toEqual({
      status: 409,
      error: 'already_member',
    });
    const joined = await http()
      .post('/api/v0/team/join/')
      .set(as(recipient.key))
      .send({ team_id: teamId, token })
      .expect(200);
    expect(joined.body).toMatchObject({ team_id: teamId, role: 'member' });
    const memberTeamKey = joined.body.api_key as string;

    const members = await vastai(sender.key, 'show', 'members');
    expect(members.out).toContain(sender.email);
    expect(members.out).toContain(recipient.email);
    const listed = await http().get('/api/v0/team/members/').set(as(memberTeamKey)).expect(200);
    expect(listed.body.map((m: { id: number; role: string }) => [m.id, m.role])).toEqual([
      [sender.id, 'owner'],
      [recipient.id, 'member'],
    ]);
    // The member role reads the team but cannot invite or remove.
    const notAllowed = await http()
      .post(`/api/v0/team/invite/?email=x%40example.com&role=member`)
      .set(as(memberTeamKey))
      .send({});
    expect(notAllowed.status).toBe(403);

    // What a team key creates belongs to the team: every member's team key sees it, personal keys do not; the
    // member role lacks user_write, so it cannot create templates.
    await eventually(
      async () =>
        (await http().get('/api/v0/template/').set(as(memberTeamKey))).status === 200 ? true : undefined,
      30_000,
      'the team key reaches the marketplace',
    );
    expect(
      (await http().post('/api/v0/template/').set(as(memberTeamKey)).send({ name: 'no', image: 'busybox' }))
        .status,
    ).toBe(403);
    await http()
      .post('/api/v0/template/')
      .set(as(ownerTeamKey!))
      .send({ name: 'team-template', image: 'busybox', private: true })
      .expect(200);
    const seen = async (key: string) =>
      (
        (await http().get('/api/v0/template/').set(as(key))).body.templates as Array<{
          name: string;
          creator_id: number;
        }>
      )
        .filter((t) => t.name === 'team-template')
        .map((t) => t.creator_id);
    expect(await seen(memberTeamKey)).toEqual([teamId]);
    expect(await seen(recipient.key)).toEqual([]);
    expect(await seen(sender.key)).toEqual([]);

    const removed = await vastai(sender.key, 'remove', 'member', String(recipient.id));
    expect(removed.out).toContain('removed');
    await eventually(
      async () =>
        (await http().get('/api/v0/users/current/').set(as(memberTeamKey))).status === 401 ? true : undefined,
      30_000,
      "the removed member's team key stops working",
    );
    const owner = await http().delete(`/api/v0/team/members/${sender.id}/`).set(as(sender.key));
    expect({ status: owner.status, error: owner.body.error }).toEqual({
      status: 400,
      error: 'cannot_remove_owner',
    });

    const destroyed = await vastai(sender.key, 'destroy', 'team');
    expect(destroyed.out).toContain('destroyed');
    expect((await http().get('/api/v0/users/current/').set(as(ownerTeamKey!))).status).toBe(401);
    const gone = await http().get('/api/v0/team/members/').set(as(sender.key));
    expect({ status: gone.status, error: gone.body.error }).toEqual({ status: 404, error: 'team_not_found' });
    const audit = JSON.parse((await vastai(sender.key, 'show', 'audit-logs', '--raw')).stdout) as Array<{
      action: string;
    }>;
    expect(audit.map((a) => a.action)).toEqual(
      expect.arrayContaining(['TeamCreated', 'TeamMemberInvited', 'TeamMemberRemoved', 'TeamDestroyed']),
    );
  });

  it('keeps the ledger balanced and every read model equal to its rebuild', async () => {
    await eventually(
      async () => ((await ledgerImbalances(db)).length === 0 ? true : undefined),
      30_000,
      'balanced',
    );
    for (const token of [MARKETPLACE_RUNTIME, IDENTITY_RUNTIME, INSTANCE_RUNTIME]) {
      expect(await settledRebuildMismatches(app.get<ContextRuntime>(token))).toEqual([]);
    }
  });
});
