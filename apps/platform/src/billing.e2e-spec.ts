import { type ContextRuntime, ManualClock } from '@rigmarket/event-sourcing';
import { IDENTITY_RUNTIME, IdentityModule, RecordingMailer } from '@rigmarket/identity-2fa';
import { INSTANCE_RUNTIME, InstanceLifecycleModule } from '@rigmarket/instance-lifecycle';
import {
  BillingMeter,
  MARKETPLACE_RUNTIME,
  MarketplaceModule,
  ledgerImbalances,
} from '@rigmarket/marketplace-api';
import {
  BOTH_MODES,
  type PlatformHarness,
  eventually,
  rebuildMismatches,
  startPlatform,
  uniqueName,
} from '@rigmarket/testing';
import request from 'supertest';
import { HOST_HARDWARE, LIST_MACHINE_ASK } from './testing/fixtures';
import { grantCredit, verifiedUser } from './testing/users';

/**
 * Billing of instances, as a renter sees it on invoices: compute at dph_total while the instance runs,
 * the disk alone while it is stopped, and the instance stopped when the account runs out of credit.
 * The clock is moved by hand and the billing meter run on demand, so amounts are exact.
 */
const ADMIN_KEY = 'admin-billing-key-0123456789';
const HOUR = 3_600_000;

const HARDWARE = { ...HOST_HARDWARE, public_ipaddr: '203.0.113.9', hostname: 'rig-b' };
// 1 GPU at $0.90/h, and 10 GB of disk at $0.72/GB/month = $0.01/h: dph_total $0.91.
const ASK = { ...LIST_MACHINE_ASK, price_gpu: 0.9, price_disk: 0.72 };

describe.each(BOTH_MODES)('instance billing, %s', (_label, mode) => {
  let h: PlatformHarness;
  let clock: ManualClock;
  const mailer = new RecordingMailer();
  const http = () => request(h.app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });
  let renterKey: string;
  let renterId: number;
  let machineId: number;

  const credit = async () =>
    (await http().get('/api/v0/users/me/invoices').set(as(renterKey)).expect(200)).body.current as {
      credit: number;
      charges: number;
    };
  const show = async (id: number) =>
    (await http().get(`/api/v0/instances/${id}/`).set(as(renterKey)).expect(200)).body.instances as Record<
      string,
      unknown
    >;
  const until = (id: number, status: string) =>
    eventually(
      async () => ((await show(id)).actual_status === status ? true : undefined),
      30_000,
      `instance ${id} ${status}`,
    );
  /** Runs the meter once the instance's billing events reached marketplace (over the transport). */
  const bill = async (expectedKinds: string[]) =>
    eventually(
      async () => {
        const meter = h.app.get(BillingMeter);
        const due = await meter.due(clock.now());
        return due.length === expectedKinds.length && due.every((d, i) => d.kind === expectedKinds[i])
          ? meter.runOnce()
          : undefined;
      },
      60_000,
      `charges ${expectedKinds.join(', ')} due`,
    );

  beforeAll(async () => {
    clock = new ManualClock(new Date());
    h = await startPlatform(
      mode,
      [
        IdentityModule.forRoot({ adminKey: ADMIN_KEY, mailer }),
        MarketplaceModule.forRoot({ billingIntervalMs: 0 }),
        InstanceLifecycleModule.forRoot({ simulatedHost: { pullMs: 20, bootMs: 60, stopMs: 30 } }),
      ],
      { clock },
    );
    const email = `${uniqueName('payer')}@example.com`;
    await http().post('/api/v0/users/').send({ email, password: 'correct horse battery' }).expect(201);
    const code = /code is (\w+)/.exec(mailer.sent.find((m) => m.to === email)?.text ?? '')?.[1];
    await http().post('/api/v0/users/verify_email/').send({ email, code }).expect(200);
    renterKey = (
      await http()
        .post('/api/v0/users/login/')
        .send({ username: email, password: 'correct horse battery' })
        .expect(200)
    ).body.session_key;
    renterId = (await http().get('/api/v0/users/current/').set(as(renterKey)).expect(200)).body.id;
    // The renter's key reaches marketplace over the transport.
    await eventually(
      async () =>
        (await http().get('/api/v0/users/me/invoices').set(as(renterKey))).status === 200 ? true : undefined,
      60_000,
      "the renter's key in marketplace",
    );
    await eventually(
      async () =>
        (await http().get('/api/v0/machines').set(as(ADMIN_KEY))).status === 200 ? true : undefined,
      60_000,
      'admin key in marketplace',
    );
    machineId = (await http().post('/api/v0/machines/').set(as(ADMIN_KEY)).send(HARDWARE).expect(201)).body
      .machine_id;
    await http()
      .put('/api/v0/machines/create_asks/')
      .set(as(ADMIN_KEY))
      .send({ machine: machineId, ...ASK })
      .expect(200);
    await eventually(
      async () =>
        (
          await http()
            .post('/api/v0/credit/')
            .set(as(ADMIN_KEY))
            .send({ user_id: renterId, amount: 1, note: 'trial' })
        ).status === 200
          ? true
          : undefined,
      60_000,
      'the admin user in marketplace',
    );
  }, 180_000);
  afterAll(async () => {
    await h?.close();
  });

  it('charges compute while running, storage while stopped, never twice, and stops the instance when credit runs out', async () => {
    expect(await credit()).toEqual({ credit: 1, charges: 0 });
    const offerId = machineId * 1000 + 1;
    const created = await eventually(
      async () => {
        const res = await http()
          .put(`/api/v0/asks/${offerId}/`)
          .set(as(renterKey))
          .send({ image: 'busybox', disk: 10, runtype: 'ssh' });
        return res.status === 200 ? res : undefined;
      },
      60_000,
      'offer in instance-lifecycle',
    );
    const id = created.body.new_contract as number;
    await until(id, 'running');
    expect((await show(id)).dph_total).toBeCloseTo(0.91, 6);

    // Half an hour of compute.
    clock.advance(HOUR / 2);
    expect(await bill(['gpu'])).toEqual([
      expect.objectContaining({ instanceId: id, kind: 'gpu', amountMicros: 455_000 }),
    ]);
    expect(await credit()).toEqual({ credit: 0.545, charges: 0.455 });
    // A second run at the same moment charges nothing more.
    expect(await h.app.get(BillingMeter).runOnce()).toEqual([]);

    // Stopped for an hour: only the disk is billed.
    await http().put(`/api/v0/instances/${id}/`).set(as(renterKey)).send({ state: 'stopped' }).expect(200);
    await until(id, 'stopped');
    clock.advance(HOUR);
    expect(await bill(['storage'])).toEqual([
      expect.objectContaining({ instanceId: id, kind: 'storage', amountMicros: 10_000 }),
    ]);
    expect((await credit()).credit).toBe(0.535);

    // Started again and run for an hour: the charge takes the balance below zero.
    await http().put(`/api/v0/instances/${id}/`).set(as(renterKey)).send({ state: 'running' }).expect(200);
    await until(id, 'running');
    clock.advance(HOUR);
    // The disk was billed up to the start; compute runs from the host's running report.
    expect(await bill(['gpu'])).toEqual([
      expect.objectContaining({ instanceId: id, kind: 'gpu', amountMicros: 910_000 }),
    ]);
    expect((await credit()).credit).toBe(-0.375);

    // marketplace announces CreditExhausted; instance-lifecycle stops the instance and says why.
    const stopped = await eventually(
      async () => {
        const row = await show(id);
        return row.intended_status === 'stopped' && row.actual_status === 'stopped' ? row : undefined;
      },
      60_000,
      'the instance stopped for lack of credit',
    );
    expect(String(stopped.status_msg)).toMatch(/ran out of credit/);

    // The host earned what the renter paid (each earning follows from its recorded charge).
    const earned = await eventually(
      async () => {
        const earnings = await http()
          .get(`/api/v0/users/me/earnings?machine_id=${machineId}`)
          .set(as(ADMIN_KEY))
          .expect(200);
        return earnings.body.earnings.length === 3
          ? (earnings.body.machines[String(machineId)] as number)
          : undefined;
      },
      30_000,
      'the three earnings of the host',
    );
    expect(earned).toBe(1.375);

    // What `vastai show earnings -m ID -s START -e END` sends: machid, and sday/eday in days since the epoch.
    const all = await http()
      .get(`/api/v0/users/me/machine-earnings?machid=${machineId}`)
      .set(as(ADMIN_KEY))
      .expect(200);
    const days = (all.body.earnings as Array<{ timestamp: number }>).map((e) =>
      Math.floor(e.timestamp / 86_400),
    );
    const inDays = async (sday: number, eday: number, machid = machineId) =>
      (
        await http()
          .get(`/api/v0/users/me/machine-earnings?owner=me&sday=${sday}&eday=${eday}&machid=${machid}`)
          .set(as(ADMIN_KEY))
          .expect(200)
      ).body as { earnings: unknown[]; machines: Record<string, number> };
    const span = await inDays(Math.min(...days), Math.max(...days));
    expect({ count: span.earnings.length, total: span.machines[String(machineId)] }).toEqual({
      count: 3,
      total: 1.375,
    });
    expect((await inDays(Math.min(...days) - 3, Math.min(...days) - 2)).earnings).toEqual([]);
    expect((await inDays(Math.min(...days), Math.max(...days), machineId + 999)).machines).toEqual({});
    const refused = await http().get('/api/v0/users/me/machine-earnings?sday=yesterday').set(as(ADMIN_KEY));
    expect({ status: refused.status, error: refused.body.error }).toEqual({
      status: 400,
      error: 'bad_request',
    });
  }, 240_000);

  it('releases the GPUs of an account out of credit, refuses its starts, and lets it start again after a grant', async () => {
    const fourGpuOffer = async () =>
      (await http().post('/api/v0/bundles/').set(as(renterKey)).send({}).expect(200)).body.offers.some(
        (o: { machine_id: number; num_gpus: number }) => o.machine_id === machineId && o.num_gpus === 4,
      ) as boolean;
    // The instance stopped for credit above gave its GPU back: all 4 of the machine's GPUs are offered again.
    await eventually(async () => ((await fourGpuOffer()) ? true : undefined), 30_000, 'the GPU released');
    const [row] = (await http().get('/api/v0/instances/').set(as(renterKey)).expect(200)).body
      .instances as Array<Record<string, unknown>>;
    expect(String(row!.status_msg)).toMatch(/ran out of credit and the GPUs were released/);
    const id = row!.id as number;
    // At or below $0, it cannot be started: 402 insufficient_credit, and nothing changes.
    const refused = await http()
      .put(`/api/v0/instances/${id}/`)
      .set(as(renterKey))
      .send({ state: 'running' })
      .expect(402);
    expect(refused.body).toMatchObject({ success: false, error: 'insufficient_credit' });
    expect(refused.body.msg).toMatch(/balance is \$-0\.38/);
    expect(await fourGpuOffer()).toBe(true);
    // A grant lifts the balance above zero: it starts, taking a GPU again.
    await http()
      .post('/api/v0/credit/')
      .set(as(ADMIN_KEY))
      .send({ user_id: renterId, amount: 2 })
      .expect(200);
    await eventually(
      async () =>
        (await http().put(`/api/v0/instances/${id}/`).set(as(renterKey)).send({ state: 'running' }))
          .status === 200
          ? true
          : undefined,
      30_000,
      'the start accepted once the grant reached instance-lifecycle',
    );
    await until(id, 'running');
    await eventually(async () => ((await fourGpuOffer()) ? undefined : true), 30_000, 'the GPU taken again');
    await http().put(`/api/v0/instances/${id}/`).set(as(renterKey)).send({ state: 'stopped' }).expect(200);
    await until(id, 'stopped');
  });

  it('refuses every rent of a $0 account, 20 at once: 402 insufficient_credit, no GPU taken', async () => {
    const broke = await verifiedUser(h.app.getHttpServer(), mailer, 'broke');
    const offerId = machineId * 1000 + 1;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        http().put(`/api/v0/asks/${offerId}/`).set(as(broke)).send({ image: 'busybox', disk: 10 }),
      ),
    );
    expect(answers.map((a) => [a.status, a.body.error])).toEqual(
      Array.from({ length: 20 }, () => [402, 'insufficient_credit']),
    );
    expect((await http().get('/api/v0/instances/').set(as(broke)).expect(200)).body.instances).toEqual([]);
  });

  it('answers 400 naming the bound for a price, bid, disk or grant beyond it', async () => {
    const refused = async (req: request.Test, field: RegExp) => {
      const res = await req;
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false });
      expect(res.body.msg).toMatch(field);
    };
    const offerId = machineId * 1000 + 1;
    await refused(
      http().put(`/api/v0/asks/${offerId}/`).set(as(renterKey)).send({ image: 'busybox', price: 1e308 }),
      /price must be at most 1,000 \$\/hour per GPU/,
    );
    await refused(
      http().put(`/api/v0/asks/${offerId}/`).set(as(renterKey)).send({ image: 'busybox', disk: 1e308 }),
      /disk must be a positive number of GB, at most 100,000/,
    );
    await refused(
      http()
        .put('/api/v0/machines/create_asks/')
        .set(as(ADMIN_KEY))
        .send({ machine: machineId, ...ASK, price_gpu: 5e306 }),
      /price_gpu must be at most 1,000 \$\/hour per GPU/,
    );
    await refused(
      http()
        .put('/api/v0/machines/create_asks/')
        .set(as(ADMIN_KEY))
        .send({ machine: machineId, ...ASK, price_disk: 1e308 }),
      /price_disk must be at most 10 \$\/GB\/month/,
    );
    await refused(
      http().post('/api/v0/credit/').set(as(ADMIN_KEY)).send({ user_id: renterId, amount: 1e308 }),
      /amount must be a positive amount of at most \$1,000,000/,
    );
    // Nothing of it reached the ledger or the offers.
    expect((await credit()).credit).toBe(1.625);
    const offers = await http().post('/api/v0/bundles/').set(as(renterKey)).send({}).expect(200);
    expect(offers.body.offers.find((o: { id: number }) => o.id === offerId)?.dph_base).toBe(0.9);
  });

  it('keeps offer search up when a machine was listed at an absurd price before the limits', async () => {
    const marketplace = h.app.get<ContextRuntime>(MARKETPLACE_RUNTIME, { strict: false });
    const other = (
      await http()
        .post('/api/v0/machines/')
        .set(as(ADMIN_KEY))
        .send({ ...HARDWARE, hostname: 'rig-poison' })
        .expect(201)
    ).body.machine_id as number;
    await http()
      .put('/api/v0/machines/create_asks/')
      .set(as(ADMIN_KEY))
      .send({ machine: other, ...ASK })
      .expect(200);
    // What a listing at 1e308 $/hour per GPU recorded before the limits existed.
    const history = await marketplace.db.transaction((sql) =>
      marketplace.store.readStream(sql, `machine-${other}`),
    );
    const listed = history.find((e) => e.type === 'MachineListed')!;
    const poisoned = { ...(listed.data as { ask: Record<string, unknown> }) };
    poisoned.ask = { ...poisoned.ask, priceGpu: 1e308, minBid: 1e308, priceDisk: 5e306 };
    await marketplace.runner.handle(
      `machine-${other}`,
      { initialState: () => ({}), evolve: (state) => state },
      () => [{ type: 'MachineListed', data: poisoned }],
      { correlationId: 'poison', causationId: 'poison' },
    );
    // The CLI's default search (score order, 5 GB of storage), then each price type.
    for (const body of [
      {},
      { verified: { eq: true }, rentable: { eq: true }, order: [['score', 'desc']], allocated_storage: 5.0 },
      { type: 'bid', order: [['dph_total', 'asc']] },
      { type: 'reserved', order: [['dlperf_per_dphtotal', 'desc']] },
    ]) {
      const res = await http().post('/api/v0/bundles/').set(as(renterKey)).send(body);
      expect([res.status, res.body.error]).toEqual([200, undefined]);
      expect(Array.isArray(res.body.offers)).toBe(true);
    }
    const all = await http().post('/api/v0/bundles/').set(as(renterKey)).send({}).expect(200);
    expect(all.body.offers.some((o: { machine_id: number }) => o.machine_id === machineId)).toBe(true);
  });

  it('charges every other instance when one cannot be charged, and logs the one skipped', async () => {
    const marketplace = h.app.get<ContextRuntime>(MARKETPLACE_RUNTIME, { strict: false });
    // Two billing periods as rented before the limits existed: one at an absurd rate, one ordinary (the renter's).
    const start = new Date(clock.now().getTime() - HOUR).toISOString();
    await marketplace.db.query(
      `INSERT INTO marketplace.billing_periods (instance_id, started_at, renter_id, host_id, machine_id, kind, rate_per_hour_micros)
       VALUES (900001, $1, $2, 1, $3, 'gpu', 9000000000000000000), (900002, $1, $2, 1, $3, 'gpu', 360000)`,
      [start, renterId, machineId],
    );
    const errors: string[] = [];
    const meter = h.app.get(BillingMeter);
    const logger = (meter as unknown as { log: { error: (m: string) => void } }).log;
    const original = logger.error.bind(logger);
    logger.error = (m: string) => {
      errors.push(m);
      original(m);
    };
    try {
      const charged = await meter.runOnce();
      expect(charged).toEqual([expect.objectContaining({ instanceId: 900002, amountMicros: 360_000 })]);
      expect(errors).toEqual([expect.stringMatching(/^instance 900001: .*skipped/)]);
      // The next run skips it again and still charges the others' new periods (the stopped instance's disk too).
      clock.advance(HOUR);
      const next = await meter.runOnce();
      expect(next).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ instanceId: 900002, amountMicros: 360_000 }),
          expect.objectContaining({ kind: 'storage', amountMicros: 10_000 }),
        ]),
      );
      expect(next.some((c) => c.instanceId === 900001)).toBe(false);
      expect(errors).toHaveLength(2);
    } finally {
      logger.error = original;
      await marketplace.db.query(
        `DELETE FROM marketplace.billing_periods WHERE instance_id IN (900001, 900002)`,
      );
    }
    expect((await credit()).credit).toBe(0.895);
  });

  it("one run charges each of a renter's running instances once, and stops them all when it takes the account below zero", async () => {
    const payer = await verifiedUser(h.app.getHttpServer(), mailer, 'many');
    const payerId = (await http().get('/api/v0/users/current/').set(as(payer)).expect(200)).body.id as number;
    await grantCredit(h.app.getHttpServer(), ADMIN_KEY, payer, 1);
    const ids: number[] = [];
    for (let n = 0; n < 3; n += 1) {
      // The machine's offers follow each rent over the transport: a rent right after another may wait.
      const res = await eventually(
        async () => {
          const answer = await http()
            .put(`/api/v0/asks/${machineId * 1000 + 1}/`)
            .set(as(payer))
            .send({ image: 'busybox', disk: 10 });
          return answer.status === 200 ? answer : undefined;
        },
        60_000,
        `rent ${n + 1} of 3`,
      );
      ids.push(res.body.new_contract as number);
    }
    const mine = async () =>
      (await http().get('/api/v0/instances/').set(as(payer)).expect(200)).body.instances as Array<
        Record<string, unknown>
      >;
    await eventually(
      async () => ((await mine()).every((i) => i.actual_status === 'running') ? true : undefined),
      30_000,
      'the three instances running',
    );
    clock.advance(HOUR);
    const meter = h.app.get(BillingMeter);
    // Once the three compute periods reached marketplace, one run: an hour of each at $0.91.
    const charged = await eventually(
      async () => {
        const due = (await meter.due(clock.now())).filter((d) => d.renterId === payerId);
        return due.length === 3 && due.every((d) => d.kind === 'gpu') ? meter.runOnce() : undefined;
      },
      60_000,
      'the three compute periods due',
    );
    expect(
      charged
        .filter((c) => c.renterId === payerId)
        .map((c) => [c.instanceId, c.kind, c.amountMicros])
        .sort(),
    ).toEqual(ids.map((id) => [id, 'gpu', 910_000]).sort());
    expect((await meter.runOnce()).filter((c) => c.renterId === payerId)).toEqual([]);
    const invoices = (await http().get('/api/v0/users/me/invoices').set(as(payer)).expect(200)).body;
    expect(invoices.current).toEqual({ credit: -1.73, charges: 2.73 });
    expect(
      invoices.invoices
        .filter((i: { type: string }) => i.type === 'charge_gpu')
        .map((i: { instance_id: number }) => i.instance_id)
        .sort(),
    ).toEqual([...ids].sort());
    // Out of credit once, right after the charge that crossed $0; every instance stopped for it.
    const marketplace = h.app.get<ContextRuntime>(MARKETPLACE_RUNTIME, { strict: false });
    const events = await marketplace.db.transaction((sql) =>
      marketplace.store.readStream(sql, `ledger-${payerId}`),
    );
    expect(events.map((e) => e.type)).toEqual([
      'CreditGranted',
      'AccountCharged',
      'AccountCharged',
      'CreditExhausted',
      'AccountCharged',
    ]);
    const stopped = await eventually(
      async () => {
        const rows = await mine();
        return rows.every((r) => r.intended_status === 'stopped' && r.actual_status === 'stopped')
          ? rows
          : undefined;
      },
      60_000,
      'the three instances stopped for lack of credit',
    );
    for (const row of stopped) expect(String(row.status_msg)).toMatch(/ran out of credit/);
    // The host earned each charge once.
    const earnings = await eventually(
      async () => {
        const body = (
          await http().get(`/api/v0/users/me/earnings?machine_id=${machineId}`).set(as(ADMIN_KEY)).expect(200)
        ).body as { earnings: Array<{ instance_id: number; amount: number }> };
        const found = body.earnings.filter((e) => ids.includes(e.instance_id));
        return found.length >= 3 ? found : undefined;
      },
      30_000,
      "the host's earnings of the three charges",
    );
    expect(earnings.map((e) => [e.instance_id, e.amount]).sort()).toEqual(ids.map((id) => [id, 0.91]).sort());
  }, 240_000);

  it('balances: for every account, credit granted - charges + earnings = its balance, in both read models', async () => {
    const marketplace = h.app.get<ContextRuntime>(MARKETPLACE_RUNTIME, { strict: false });
    const imbalances = await eventually(
      async () => {
        const found = await marketplace.db.transaction((sql) => ledgerImbalances(sql));
        return found.length === 0 ? found : undefined;
      },
      30_000,
      'the ledger balanced',
    ).catch(() => marketplace.db.transaction((sql) => ledgerImbalances(sql)));
    expect(imbalances).toEqual([]);
    // identity's credit (GET /users/current/) is the ledger's balance, earnings included (the host's last
    // earnings may still be on their way to identity over the transport).
    const current = await eventually(
      async () => {
        const shown = await http().get('/api/v0/users/current/').set(as(ADMIN_KEY)).expect(200);
        const ledger = await http().get('/api/v0/users/me/credit').set(as(ADMIN_KEY)).expect(200);
        return shown.body.credit === ledger.body.credit ? shown : undefined;
      },
      30_000,
      "identity's credit equal to the ledger's balance",
    );
    expect(current.body.credit).toBeGreaterThan(0);
  });

  it('rebuilds every read model of the three contexts from their events to the same rows', async () => {
    for (const token of [IDENTITY_RUNTIME, MARKETPLACE_RUNTIME, INSTANCE_RUNTIME]) {
      const runtime = h.app.get<ContextRuntime>(token, { strict: false });
      // Retried while the last events of the flow above may still be on their way over the transport.
      const mismatches = await eventually(
        async () => {
          const found = await rebuildMismatches(runtime);
          return found.length === 0 ? found : undefined;
        },
        30_000,
        `${runtime.schema} read models equal after rebuild`,
      ).catch(() => rebuildMismatches(runtime));
      expect(mismatches).toEqual([]);
    }
  }, 120_000);
});
