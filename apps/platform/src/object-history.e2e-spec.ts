import { ManualClock } from '@rigmarket/event-sourcing';
import { IdentityModule, RecordingMailer } from '@rigmarket/identity-2fa';
import { InstanceLifecycleModule } from '@rigmarket/instance-lifecycle';
import { MarketplaceModule } from '@rigmarket/marketplace-api';
import { BOTH_MODES, type PlatformHarness, eventually, startPlatform } from '@rigmarket/testing';
import request from 'supertest';
import { HOST_HARDWARE, LIST_MACHINE_ASK } from './testing/fixtures';
import { grantCredit, verifiedUser } from './testing/users';

/**
 * An object's history and its state at a moment, from its events (docs/audit.md): an instance read at three
 * moments of its life (running, stopped, destroyed), its event history with who did what, an API key's
 * history without its hash, and another account refused as if the object did not exist.
 */
const ADMIN_KEY = 'admin-history-key-0123456789';
const HOUR = 3_600_000;

interface AsOf {
  success: boolean;
  as_of: number;
  version: number;
  state: Record<string, unknown>;
}

describe.each(BOTH_MODES)('object history and as-of reads, %s', (_label, mode) => {
  let h: PlatformHarness;
  let clock: ManualClock;
  const mailer = new RecordingMailer();
  const http = () => request(h.app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });
  let renterKey: string;
  let otherKey: string;
  let instanceId: number;
  let machineId: number;
  const moments: Record<'beforeRent' | 'running' | 'stopped' | 'destroyed', number> = {
    beforeRent: 0,
    running: 0,
    stopped: 0,
    destroyed: 0,
  };
  const seconds = () => clock.now().getTime() / 1000;

  const actual = async (id: number) =>
    (await http().get(`/api/v0/instances/${id}/`).set(as(renterKey)).expect(200)).body.instances
      ?.actual_status as string | undefined;

  beforeAll(async () => {
    clock = new ManualClock(new Date(Date.UTC(2026, 10, 1, 9, 0, 0)));
    h = await startPlatform(
      mode,
      [
        IdentityModule.forRoot({ adminKey: ADMIN_KEY, mailer }),
        MarketplaceModule.forRoot({ billingIntervalMs: 0 }),
        InstanceLifecycleModule.forRoot({ simulatedHost: { pullMs: 20, bootMs: 40, stopMs: 20 } }),
      ],
      { clock },
    );
    renterKey = await verifiedUser(h.app.getHttpServer(), mailer, 'historian');
    otherKey = await verifiedUser(h.app.getHttpServer(), mailer, 'snoop');
    await grantCredit(h.app.getHttpServer(), ADMIN_KEY, renterKey, 50);
    await eventually(
      async () =>
        (await http().get('/api/v0/machines').set(as(ADMIN_KEY))).status === 200 ? true : undefined,
      60_000,
      'the admin key in marketplace',
    );
    machineId = (
      await http()
        .post('/api/v0/machines/')
        .set(as(ADMIN_KEY))
        .send({ ...HOST_HARDWARE, hostname: 'rig-history' })
        .expect(201)
    ).body.machine_id as number;
    await http()
      .put('/api/v0/machines/create_asks/')
      .set(as(ADMIN_KEY))
      .send({ machine: machineId, ...LIST_MACHINE_ASK })
      .expect(200);

    moments.beforeRent = seconds();
    clock.advance(HOUR);
    const created = await eventually(
      async () => {
        const res = await http()
          .put(`/api/v0/asks/${machineId * 1000 + 1}/`)
          .set(as(renterKey))
          .send({ image: 'busybox', disk: 10, runtype: 'ssh', label: 'first' });
        return res.status === 200 ? res : undefined;
      },
      60_000,
      'the offer in instance-lifecycle',
    );
    instanceId = created.body.new_contract as number;
    await eventually(
      async () => ((await actual(instanceId)) === 'running' ? true : undefined),
      30_000,
      'running',
    );
    moments.running = seconds();

    clock.advance(HOUR);
    await http()
      .put(`/api/v0/instances/${instanceId}/`)
      .set(as(renterKey))
      .send({ state: 'stopped' })
      .expect(200);
    await eventually(
      async () => ((await actual(instanceId)) === 'stopped' ? true : undefined),
      30_000,
      'stopped',
    );
    moments.stopped = seconds();

    clock.advance(HOUR);
    await http().delete(`/api/v0/instances/${instanceId}/`).set(as(renterKey)).expect(200);
    moments.destroyed = seconds();
    clock.advance(HOUR);
  }, 180_000);
  afterAll(() => h?.close());

  const asOf = async (at: number) =>
    (await http().get(`/api/v0/instances/${instanceId}/?as_of=${at}`).set(as(renterKey)).expect(200))
      .body as AsOf;

  it('shows the instance as it was at three moments of its life', async () => {
    const running = await asOf(moments.running);
    expect(running.state).toMatchObject({
      status: 'active',
      actual: 'running',
      intended: 'running',
      label: 'first',
    });
    const stopped = await asOf(moments.stopped);
    expect(stopped.state).toMatchObject({ status: 'active', actual: 'stopped', intended: 'stopped' });
    expect(stopped.version).toBeGreaterThan(running.version);
    const destroyed = await asOf(moments.destroyed);
    expect(destroyed.state).toMatchObject({ status: 'destroyed' });
    expect(destroyed.as_of).toBe(moments.destroyed);
    // Before it was rented it did not exist; now it is gone from the live listing, but its past is not.
    await http()
      .get(`/api/v0/instances/${instanceId}/?as_of=${moments.beforeRent}`)
      .set(as(renterKey))
      .expect(404);
  });

  it("lists the instance's events with who caused them, and hides it from another account", async () => {
    const res = await http().get(`/api/v0/instances/${instanceId}/history/`).set(as(renterKey)).expect(200);
    const history = res.body.history as Array<{
      position: number;
      type: string;
      at: number;
      user_id: number | null;
    }>;
    expect(history.map((e) => e.position)).toEqual(history.map((_, i) => i + 1));
    expect(history[0]).toMatchObject({ type: 'InstanceCreated' });
    expect(history.map((e) => e.type)).toEqual(
      expect.arrayContaining(['InstanceStateChanged', 'InstanceDestroyed']),
    );
    const renterId = (await http().get('/api/v0/users/current/').set(as(renterKey)).expect(200)).body.id;
    expect(history.find((e) => e.type === 'InstanceDestroyed')?.user_id).toBe(renterId);
    expect(JSON.stringify(history)).not.toMatch(/apiKeyHash|[hH]ash"\s*:/);
    for (const path of [
      `/api/v0/instances/${instanceId}/history/`,
      `/api/v0/instances/${instanceId}/?as_of=${moments.running}`,
    ]) {
      const refused = await http().get(path).set(as(otherKey)).expect(404);
      expect(refused.body).toMatchObject({ success: false, error: 'no_such_instance' });
    }
  });

  it("shows an API key's history and past state without its hash", async () => {
    const created = await http()
      .post('/api/v0/auth/apikeys/')
      .set(as(renterKey))
      .send({ name: 'temp' })
      .expect(201);
    const keyId = created.body.id as number;
    const whenCreated = seconds();
    clock.advance(HOUR);
    await http().delete(`/api/v0/auth/apikeys/${keyId}/`).set(as(renterKey)).expect(200);
    const history = (
      await http().get(`/api/v0/auth/apikeys/${keyId}/history/`).set(as(renterKey)).expect(200)
    ).body.history as Array<{ type: string; payload: Record<string, unknown> }>;
    expect(history.map((e) => e.type)).toEqual(['ApiKeyCreated', 'ApiKeyDeleted']);
    expect(history[0]?.payload).toMatchObject({ keyId, name: 'temp' });
    expect(JSON.stringify(history)).not.toContain(created.body.key);
    expect(JSON.stringify(history)).not.toMatch(/keyHash/);
    const then = (
      await http().get(`/api/v0/auth/apikeys/${keyId}/?as_of=${whenCreated}`).set(as(renterKey)).expect(200)
    ).body as AsOf;
    expect(then.state).toMatchObject({ status: 'active', keyId });
    await http().get(`/api/v0/auth/apikeys/${keyId}/history/`).set(as(otherKey)).expect(404);
  });

  it("shows a machine's and a template's history, and a template as it was before an edit", async () => {
    const machine = (
      await http().get(`/api/v0/machines/${machineId}/history/`).set(as(ADMIN_KEY)).expect(200)
    ).body.history as Array<{ type: string }>;
    expect(machine.map((e) => e.type).slice(0, 2)).toEqual(['MachineRegistered', 'MachineListed']);
    await http().get(`/api/v0/machines/${machineId}/history/`).set(as(otherKey)).expect(404);

    const created = await http()
      .post('/api/v0/template/')
      .set(as(renterKey))
      .send({ name: 'before', image: 'busybox', env: '-e TOKEN=hunter2', onstart: 'echo hunter2' })
      .expect(200);
    const { id, hash_id: hashId } = created.body.template as { id: number; hash_id: string };
    const whenCreated = seconds();
    clock.advance(HOUR);
    await http()
      .put('/api/v0/template/')
      .set(as(renterKey))
      .send({ hash_id: hashId, name: 'after' })
      .expect(200);
    const all = (await http().get(`/api/v0/template/${id}/history/`).set(as(renterKey)).expect(200)).body;
    expect(all.history.map((e: { type: string }) => e.type)).toEqual(['TemplateCreated', 'TemplateEdited']);
    expect(JSON.stringify(all)).not.toContain('hunter2');
    const then = (
      await http().get(`/api/v0/template/${id}/history/?as_of=${whenCreated}`).set(as(renterKey)).expect(200)
    ).body;
    expect(then).toMatchObject({ version: 1, state: { status: 'active', content: { name: 'before' } } });
    expect(then.history).toHaveLength(1);
    await http().get(`/api/v0/template/${id}/history/`).set(as(otherKey)).expect(404);
  });

  it("shows the caller's own 2FA history: empty without methods, never another account's", async () => {
    const mine = (await http().get('/api/v0/tfa/history/').set(as(otherKey)).expect(200)).body;
    expect(mine).toMatchObject({ success: true, history: [] });
  });

  it('answers 400 for an as_of that is not a time', async () => {
    for (const bad of ['yesterday', '-5', 'NaN']) {
      const res = await http()
        .get(`/api/v0/instances/${instanceId}/?as_of=${bad}`)
        .set(as(renterKey))
        .expect(400);
      expect(res.body).toMatchObject({ success: false, error: 'invalid_args' });
    }
  });
});
