import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { INestApplication } from '@nestjs/common';
import { type ContextRuntime, Database, ManualClock } from '@rigmarket/event-sourcing';
import { IDENTITY_RUNTIME, RecordingMailer } from '@rigmarket/identity-2fa';
import { INSTANCE_RUNTIME, ScheduledJobRunner } from '@rigmarket/instance-lifecycle';
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
 * The real `vastai` CLI's reserved-instance commands (issue 14: prepay instance, show deposit) and scheduled
 * jobs (`--schedule` on change bid and reboot instance, show scheduled-jobs, delete scheduled-job) against the
 * embedded platform, with a clock moved by hand and the billing meter and the job runner run on demand. The CLI exits 0 on
 * most HTTP errors, so every test reads its output and checks the effect with a follow-up command.
 */
describe('the vastai CLI: prepaid deposits and scheduled jobs', () => {
  let app: INestApplication;
  let db: Database;
  let port: number;
  const clock = new ManualClock(new Date());
  const mailer = new RecordingMailer();
  const home = mkdtempSync(join(tmpdir(), 'vast-prepay-home-'));
  let renter: string;
  let stranger: string;
  let instanceId: number;
  let offer: number;

  /** Runs the CLI as `key`; answers stdout and stdout + stderr (also when it exits non-zero). */
  const cli = (key: string, ...args: string[]) => cliAnswering('', key, ...args);
  const cliAnswering = async (answer: string, key: string, ...args: string[]) => {
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      VAST_URL: `http://127.0.0.1:${port}`,
      VASTAI_NO_UPDATE_CHECK: '1',
      VAST_API_KEY: key,
    };
    const bin = join(__dirname, '../../../.infra/vastai-venv/bin/vastai');
    const running = promisify(execFile)(bin, args, { env, timeout: 60_000 });
    // The CLI asks before it updates an existing scheduled job: `answer` is what the user types.
    running.child.stdin?.end(answer);
    const { stdout, stderr } = await running.catch((failed: { stdout?: string; stderr?: string }) => ({
      stdout: failed.stdout ?? '',
      stderr: failed.stderr ?? '',
    }));
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

  /** Starts the platform on `db` (again, after a stop: what a restart keeps is in the database). */
  const start = async () => {
    app = await createEmbeddedApp({
      db,
      transport: new InProcessTransport(),
      identity: { adminKey: ADMIN_KEY, mailer },
      marketplace: { billingIntervalMs: 0 },
      clock,
    });
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as { port: number }).port;
  };

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    await start();
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
    offer = machineId * 1000 + 1;
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

  describe('scheduled jobs', () => {
    let bidInstance: number;
    type Job = { id: number; api_endpoint: string; runs: number; request_body: { price?: number } };
    const jobs = async (key: string) =>
      JSON.parse((await cli(key, 'show', 'scheduled-jobs', '--raw')).stdout) as Job[];
    const restarts = async (id: number) =>
      (
        await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM instance_lifecycle.events WHERE stream_id = $1 AND type = 'InstanceRestarted'`,
          [`instance-${id}`],
        )
      )[0]!.n;
    const dph = async (id: number) =>
      (
        JSON.parse((await cli(renter, 'show', 'instance', String(id), '--raw')).stdout) as {
          dph_total: number;
        }
      ).dph_total;

    const running = (id: number) =>
      eventually(
        async () => {
          const shown = await http().get(`/api/v0/instances/${id}/`).set(as(renter));
          return shown.body.instances?.actual_status === 'running' ? true : undefined;
        },
        60_000,
        `instance ${id} running`,
      );

    beforeAll(async () => {
      const created = await eventually(
        async () => {
          const res = await http()
            .put(`/api/v0/asks/${offer}/`)
            .set(as(renter))
            .send({ image: 'busybox', disk: 10, price: 0.35 });
          return res.status === 200 ? (res.body as { new_contract: number }) : undefined;
        },
        30_000,
        'a bid rented',
      );
      bidInstance = created.new_contract;
      await running(bidInstance);
    }, 120_000);

    it('vastai change bid --schedule: stores the job; show scheduled-jobs lists it; the runner changes the bid', async () => {
      const scheduled = await cli(
        renter,
        'change',
        'bid',
        String(bidInstance),
        '--price',
        '0.45',
        '--schedule',
        'HOURLY',
        '--day',
        '*',
        '--hour',
        '*',
      );
      expect(scheduled.out).toContain(
        'add_scheduled_job insert: success - Scheduling HOURLY job to change bid',
      );
      const table = (await cli(renter, 'show', 'scheduled-jobs')).out;
      expect(table).toContain(`/api/v0/instances/bid_price/${bidInstance}/`);
      expect(table).toContain('HOURLY');
      const [job] = await jobs(renter);
      expect(job).toMatchObject({
        instance_id: bidInstance,
        request_method: 'PUT',
        frequency: 'HOURLY',
        runs: 0,
      });
      const before = await dph(bidInstance);
      clock.advance(HOUR);
      const runs = await app.get(ScheduledJobRunner).runOnce();
      expect(runs).toEqual([expect.objectContaining({ jobId: job!.id, ok: true })]);
      expect(await dph(bidInstance)).toBeGreaterThan(before);
      expect((await jobs(renter))[0]).toMatchObject({ runs: 1, last_result: { ok: true } });
      // nothing more is due until the next hour
      expect(await app.get(ScheduledJobRunner).runOnce()).toEqual([]);
    });

    it('vastai change bid --schedule again: the CLI is told the job exists (422) and updates it when the user says y', async () => {
      const again = await cliAnswering(
        'y\n',
        renter,
        'change',
        'bid',
        String(bidInstance),
        '--price',
        '0.5',
        '--schedule',
        'HOURLY',
        '--day',
        '*',
        '--hour',
        '*',
      );
      expect(again.out).toContain('Existing scheduled job found');
      expect(again.out).toContain('add_scheduled_job update: success');
      const listed = await jobs(renter);
      expect(listed).toHaveLength(1);
      expect(listed[0]!.request_body.price).toBe(0.5);
    });

    it('vastai reboot instance --schedule: a daily reboot at 03:00 UTC, run by the runner (missed hours run once)', async () => {
      const rebootsBefore = await restarts(bidInstance);
      const scheduled = await cli(
        renter,
        'reboot',
        'instance',
        String(bidInstance),
        '--schedule',
        'DAILY',
        '--day',
        '*',
        '--hour',
        '3',
      );
      expect(scheduled.out).toContain('Scheduling DAILY job to reboot instance');
      // the CLI reboots at once, then schedules
      await eventually(
        async () => ((await restarts(bidInstance)) > rebootsBefore ? true : undefined),
        30_000,
        'rebooted',
      );
      const rebooted = await restarts(bidInstance);
      await running(bidInstance);
      expect((await jobs(renter)).map((j) => j.api_endpoint)).toEqual([
        `/api/v0/instances/bid_price/${bidInstance}/`,
        `/api/v0/instances/reboot/${bidInstance}/`,
      ]);
      clock.advance(25 * HOUR);
      const runs = await app.get(ScheduledJobRunner).runOnce();
      // both jobs once: the bid's 24 missed hours are not made up
      expect(runs.map((r) => r.ok)).toEqual([true, true]);
      expect(await restarts(bidInstance)).toBe(rebooted + 1);
    });

    it("another account gets 404 on every scheduled job id and cannot schedule the renter's instance", async () => {
      const [job] = await jobs(renter);
      expect(await jobs(stranger)).toEqual([]);
      expect((await cli(stranger, 'delete', 'scheduled-job', String(job!.id))).out).toMatch(/404/);
      /** An hourly call of `method endpoint` on the renter's bid, as the CLI sends it. */
      const hourly = (method: string, endpoint: string) => ({
        api_endpoint: endpoint,
        request_method: method,
        frequency: 'HOURLY',
        instance_id: bidInstance,
        end_time: clock.now().getTime() / 1000 + 86_400,
      });
      const reboot = hourly('PUT', `/api/v0/instances/reboot/${bidInstance}/`);
      for (const res of [
        await http().delete(`/api/v0/commands/schedule_job/${job!.id}/`).set(as(stranger)),
        await http().put(`/api/v0/commands/schedule_job/${job!.id}/`).set(as(stranger)).send(reboot),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({ success: false });
      }
      const foreign = await http().post('/api/v0/commands/schedule_job/').set(as(stranger)).send(reboot);
      expect(foreign.status).toBe(404);
      expect(foreign.body).toMatchObject({ success: false, error: 'no_such_instance' });
      // only the allow-listed calls can be scheduled
      const destroy = await http()
        .post('/api/v0/commands/schedule_job/')
        .set(as(renter))
        .send(hourly('DELETE', `/api/v0/instances/${bidInstance}/`));
      expect(destroy.status).toBe(400);
      expect(await jobs(renter)).toHaveLength(2);
    });

    it('the runner survives a restart: a job due while the platform was down runs once after it starts again', async () => {
      await running(bidInstance);
      const rebooted = await restarts(bidInstance);
      await app.close();
      clock.advance(24 * HOUR);
      await start();
      const runs = await app.get(ScheduledJobRunner).runOnce();
      expect(runs.map((r) => r.ok)).toEqual([true, true]);
      await eventually(
        async () => ((await restarts(bidInstance)) === rebooted + 1 ? true : undefined),
        30_000,
        'rebooted',
      );
    });

    it('vastai delete scheduled-job: the job is gone and runs no more', async () => {
      const [bid, reboot] = await jobs(renter);
      expect((await cli(renter, 'delete', 'scheduled-job', String(bid!.id))).out).toContain(
        "'success': True",
      );
      expect((await jobs(renter)).map((j) => j.id)).toEqual([reboot!.id]);
      clock.advance(HOUR);
      const runs = await app.get(ScheduledJobRunner).runOnce();
      expect(runs.map((r) => r.jobId)).not.toContain(bid!.id);
    });
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
