import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { INestApplication } from '@nestjs/common';
import { type ContextRuntime, Database, ManualClock } from '@rigmarket/event-sourcing';
import { IDENTITY_RUNTIME, RecordingMailer } from '@rigmarket/identity-2fa';
import { INSTANCE_RUNTIME } from '@rigmarket/instance-lifecycle';
import { BillingMeter, MARKETPLACE_RUNTIME, ledgerImbalances } from '@rigmarket/marketplace-api';
import { InProcessTransport } from '@rigmarket/messaging';
import { eventually, settledRebuildMismatches } from '@rigmarket/testing';
import request from 'supertest';
import { createEmbeddedApp } from './platform';
import { listVerifiedMachine } from './testing/listed-machine';
import { grantCredit, verifiedUser } from './testing/users';

const ADMIN_KEY = 'cli-prepay-jobs-admin-key';
const HOUR = 3_600_000;

/**
 * The real `vastai` CLI's reserved-instance commands (issue 14: prepay instance, show deposit) against the
 * embedded platform, with a clock moved by hand and the billing meter run on demand. The CLI exits 0 on
 * most HTTP errors, so every test reads its output and checks the effect with a follow-up command.
 */
describe('the vastai CLI: prepaid deposits', () => {
  let app: INestApplication;
  let db: Database;
  let port: number;
  const clock = new ManualClock(new Date());
  const mailer = new RecordingMailer();
  const home = mkdtempSync(join(tmpdir(), 'vast-prepay-home-'));
  let renter: string;
  let stranger: string;
  let instanceId: number;

  /** Runs the CLI as `key`; answers stdout and stdout + stderr (also when it exits non-zero). */
  const cli = async (key: string, ...args: string[]) => {
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      VAST_URL: `http://127.0.0.1:${port}`,
      VASTAI_NO_UPDATE_CHECK: '1',
      VAST_API_KEY: key,
    };
    const bin = join(__dirname, '../../../.infra/vastai-venv/bin/vastai');
    const { stdout, stderr } = await promisify(execFile)(bin, args, { env, timeout: 60_000 }).catch(
      (failed: { stdout?: string; stderr?: string }) => ({
        stdout: failed.stdout ?? '',
        stderr: failed.stderr ?? '',
      }),
    );
    return { stdout, out: stdout + stderr };
  };
  const http = () => request(app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });
  const credit = async (key: string) =>
    (JSON.parse((await cli(key, 'show', 'user', '--raw')).stdout) as { credit: number }).credit;
  const deposit = async (key: string, id: number) =>
    JSON.parse((await cli(key, 'show', 'deposit', String(id))).stdout) as Record<string, unknown>;
  /** Bills the hour just passed once its billing periods reached marketplace; answers what the instance was charged ($). */
  const billHour = async () => {
    clock.advance(HOUR);
    const meter = app.get(BillingMeter);
    const due = await eventually(
      async () => {
        const mine = (await meter.due(clock.now())).filter((d) => d.instanceId === instanceId);
        return mine.length > 0 ? mine : undefined;
      },
      30_000,
      'the instance billable',
    );
    await meter.runOnce();
    return due.reduce((sum, d) => sum + d.amountMicros, 0) / 1e6;
  };

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    app = await createEmbeddedApp({
      db,
      transport: new InProcessTransport(),
      identity: { adminKey: ADMIN_KEY, mailer },
      marketplace: { billingIntervalMs: 0 },
      clock,
    });
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as { port: number }).port;
    renter = await verifiedUser(app.getHttpServer(), mailer, 'prepayer', [
      '/api/v0/instances/',
      '/api/v0/users/me/credit/',
    ]);
    stranger = await verifiedUser(app.getHttpServer(), mailer, 'stranger', [
      '/api/v0/instances/',
      '/api/v0/users/me/credit/',
    ]);
    await grantCredit(app.getHttpServer(), ADMIN_KEY, renter, 20);
    const machineId = await listVerifiedMachine(app.getHttpServer(), ADMIN_KEY);
    const offer = machineId * 1000 + 1;
    const created = await eventually(
      async () => {
        const res = await http()
          .put(`/api/v0/asks/${offer}/`)
          .set(as(renter))
          .send({ image: 'busybox', disk: 10 });
        return res.status === 200 ? (res.body as { new_contract: number }) : undefined;
      },
      30_000,
      'the offer rentable',
    );
    instanceId = created.new_contract;
    // Running (billed for compute) in marketplace: show deposit's timescale counts at the compute rate.
    await eventually(
      async () => {
        const shown = await http().get(`/api/v0/instances/${instanceId}/`).set(as(renter));
        if (shown.body.instances?.actual_status !== 'running') return undefined;
        const due = await app.get(BillingMeter).due(new Date(clock.now().getTime() + HOUR));
        return due.some((d) => d.instanceId === instanceId && d.kind === 'gpu') ? true : undefined;
      },
      60_000,
      'the instance running and billed for compute',
    );
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it('vastai prepay instance: moves credit into the deposit; show deposit and show user read it back', async () => {
    const prepaid = await cli(renter, 'prepay', 'instance', String(instanceId), '5');
    expect(prepaid.out).toMatch(
      new RegExp(
        `prepaid for [0-9.]+ months of instance ${instanceId} applying \\$5\\.0 credits for a discount of 0\\.0%`,
      ),
    );
    expect(await credit(renter)).toBe(15);
    expect(await deposit(renter, instanceId)).toMatchObject({
      success: true,
      instance_id: instanceId,
      deposit: 5,
      prepaid: 5,
      drawn: 0,
      closed: false,
      discount_rate: 0,
    });
    // 5 $ at about 0.50 $/h: about 10 hours, a fraction of a month
    const { timescale } = await deposit(renter, instanceId);
    expect(timescale).toBeGreaterThan(0.01);
    expect(timescale).toBeLessThan(0.02);
  });

  it('vastai prepay instance: refuses more than the credit, a bad amount and another account, moving nothing', async () => {
    expect((await cli(renter, 'prepay', 'instance', String(instanceId), '1000')).out).toMatch(/402/);
    expect((await cli(stranger, 'prepay', 'instance', String(instanceId), '1')).out).toMatch(/404/);
    const bad = await http()
      .put(`/api/v0/instances/prepay/${instanceId}/`)
      .set(as(renter))
      .send({ amount: -1 });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ success: false, error: 'invalid_amount' });
    const other = await http()
      .put(`/api/v0/instances/prepay/${instanceId}/`)
      .set(as(stranger))
      .send({ amount: 1 });
    expect(other.status).toBe(404);
    expect(other.body).toMatchObject({ success: false, error: 'no_such_instance' });
    const unknown = await http().put('/api/v0/instances/prepay/999999/').set(as(renter)).send({ amount: 1 });
    expect(unknown.status).toBe(404);
    expect(await credit(renter)).toBe(15);
    expect((await deposit(renter, instanceId)).deposit).toBe(5);
  });

  it('vastai show deposit: another account gets 404', async () => {
    const res = await http().get(`/api/v0/instances/balance/${instanceId}/?owner=me`).set(as(stranger));
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ success: false, error: 'no_such_instance' });
    expect((await cli(stranger, 'show', 'deposit', String(instanceId))).out).toMatch(/404/);
  });

  it('vastai show deposit: billing draws the deposit down before the credit', async () => {
    const charged = await billHour();
    expect(charged).toBeGreaterThan(0.4);
    const shown = await deposit(renter, instanceId);
    expect(shown.drawn).toBeCloseTo(charged, 6);
    expect(shown.deposit).toBeCloseTo(5 - charged, 6);
    expect(await credit(renter)).toBe(15);
  });

  it('vastai destroy instance: the deposit left returns to the credit (refund rule), and the deposit closes', async () => {
    const before = (await deposit(renter, instanceId)).deposit as number;
    // half an hour more: charged at the destroy from the deposit, the rest refunded
    clock.advance(HOUR / 2);
    expect((await cli(renter, 'destroy', 'instance', String(instanceId), '-y')).out).not.toMatch(/fail/i);
    const closed = await eventually(
      async () => {
        const shown = await deposit(renter, instanceId);
        return shown.closed === true && shown.deposit === 0 ? shown : undefined;
      },
      30_000,
      'the deposit refunded',
    );
    const lastHalfHour = (closed.drawn as number) - (5 - before);
    expect(lastHalfHour).toBeGreaterThan(0.2);
    expect(closed.refunded).toBeCloseTo(before - lastHalfHour, 6);
    expect(await credit(renter)).toBeCloseTo(15 + (closed.refunded as number), 6);
    // a destroyed instance takes no prepayment
    expect((await cli(renter, 'prepay', 'instance', String(instanceId), '1')).out).toMatch(/404/);
    // nothing was billed twice: the meter finds nothing more due for the instance
    expect((await app.get(BillingMeter).due(clock.now())).filter((d) => d.instanceId === instanceId)).toEqual(
      [],
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
