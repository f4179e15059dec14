import type { AddressInfo } from 'node:net';
import { AGENT_CHANNEL_PATH, type LifecycleToAgent } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { IdentityModule, RecordingMailer } from '@rigmarket/identity-2fa';
import {
  INSTANCE_RUNTIME,
  InstanceLifecycleModule,
  SimulatedHostDriver,
} from '@rigmarket/instance-lifecycle';
import { InstanceVolumesReactor, MARKETPLACE_RUNTIME, MarketplaceModule } from '@rigmarket/marketplace-api';
import { SyncMaintenanceModule, UnavailableCopyExecutor } from '@rigmarket/sync-maintenance';
import {
  BOTH_MODES,
  type PlatformHarness,
  eventually,
  settledRebuildMismatches,
  startPlatform,
} from '@rigmarket/testing';
import request from 'supertest';
import WebSocket from 'ws';
import { LIST_MACHINE_ASK as ASK, HOST_HARDWARE as HARDWARE } from './testing/fixtures';
import { grantCredit, verifiedUser } from './testing/users';

/**
 * Renting with volume_info create_new (marketplace creates the volume, then the host gets the instance
 * with it) and cancel_unavail (fail at once when the instance could not start now), as renters see them.
 */
const ADMIN_KEY = 'admin-volumes-key-0123456789';
const admin = { Authorization: `Bearer ${ADMIN_KEY}` };
const as = (key: string) => ({ Authorization: `Bearer ${key}` });

interface Row {
  id: number;
  actual_status: string | null;
  status_msg: string | null;
  volume_info: Record<string, unknown> | null;
  actions: string[];
}

describe.each(BOTH_MODES)('volumes created while renting, and cancel_unavail, %s', (_mode, mode) => {
  let h: PlatformHarness;
  const mailer = new RecordingMailer();
  const http = () => request(h.app.getHttpServer());
  let renterKey: string;
  let otherKey: string;
  let machineId: number;
  const offer = () => machineId * 1000 + 1;

  const show = async (id: number): Promise<Row | null> =>
    (await http().get(`/api/v0/instances/${id}/`).set(as(renterKey)).expect(200)).body.instances;
  const until = (id: number, status: string) =>
    eventually(
      async () => {
        const row = await show(id);
        return row?.actual_status === status ? row : undefined;
      },
      30_000,
      `instance ${id} ${status}`,
    );
  const instanceCount = async () =>
    (await http().get('/api/v0/instances/').set(as(renterKey)).expect(200)).body.instances_found as number;
  const myVolumes = async (key = renterKey) =>
    (await http().get('/api/v0/volumes?type=local_volume').set(as(key)).expect(200)).body.volumes as Array<
      Record<string, unknown>
    >;
  const volumeOffer = async () => {
    const res = await http()
      .post('/api/v0/volumes/search/')
      .set(as(renterKey))
      .send({ machine_id: { eq: machineId } })
      .expect(200);
    return res.body.offers[0] as { id: number; disk_space: number } | undefined;
  };
  const rentWithNewVolume = (size: number, extra: object = {}) =>
    http()
      .put(`/api/v0/asks/${offer()}/`)
      .set(as(renterKey))
      .send({
        image: 'busybox',
        disk: 10,
        runtype: 'ssh_direct',
        volume_info: { create_new: true, volume_id: machineId, size, mount_path: '/data', name: 'scratch' },
        ...extra,
      });
  const volumes = () => h.app.get(InstanceVolumesReactor, { strict: false });

  async function listedMachine(hardware: object = HARDWARE): Promise<number> {
    const id = (await http().post('/api/v0/machines/').set(admin).send(hardware).expect(201)).body
      .machine_id as number;
    await http()
      .put('/api/v0/machines/create_asks/')
      .set(admin)
      .send({ machine: id, ...ASK })
      .expect(200);
    return id;
  }

  /** Side-effect free: a bid below the min bid is refused (400) once the machine is rentable in instance-lifecycle. */
  const lowBid = (machine: number, extra: object = {}) =>
    http()
      .put(`/api/v0/asks/${machine * 1000 + 1}/`)
      .set(as(renterKey))
      .send({ image: 'busybox', price: 0.01, ...extra });

  beforeAll(async () => {
    h = await startPlatform(mode, [
      IdentityModule.forRoot({ adminKey: ADMIN_KEY, mailer }),
      SyncMaintenanceModule.forRoot({ copyExecutor: new UnavailableCopyExecutor() }),
      MarketplaceModule.forRoot({ billingIntervalMs: 0 }),
      InstanceLifecycleModule.forRoot({
        simulatedHost: { pullMs: 30, bootMs: 120, stopMs: 50 },
        agentChannel: { offlineGraceMs: 300, helloWaitMs: 10_000 },
      }),
    ]);
    await h.app.listen(0, '127.0.0.1');
    await eventually(
      async () => ((await http().get('/api/v0/machines').set(admin)).status === 200 ? true : undefined),
      60_000,
      'the admin key in marketplace',
    );
    await eventually(
      async () => ((await http().get('/api/v0/instances/').set(admin)).status === 200 ? true : undefined),
      60_000,
      'the admin key in instance-lifecycle',
    );
    renterKey = await verifiedUser(h.app.getHttpServer(), mailer);
    otherKey = await verifiedUser(h.app.getHttpServer(), mailer);
    await grantCredit(h.app.getHttpServer(), ADMIN_KEY, renterKey);
    await grantCredit(h.app.getHttpServer(), ADMIN_KEY, otherKey);
    machineId = await listedMachine();
    // The host lists 100 GB of volume space on its machine.
    await http()
      .post('/api/v0/volumes/')
      .set(admin)
      .send({ size: 100, machine: machineId, price_disk: 0.2, end_date: 4102444800.0 })
      .expect(200);
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('a new volume larger than the free space is a clear 400 at once, and nothing is rented', async () => {
    const before = await instanceCount();
    // (retried until the volume listing has reached instance-lifecycle; until then there is no such volume offer)
    const refused = await eventually(
      async () => {
        const res = await rentWithNewVolume(101);
        return res.body.error === 'no_such_volume_offer' || res.body.error === 'no_such_offer'
          ? undefined
          : res;
      },
      60_000,
      'the machine and its volume offer in instance-lifecycle',
    );
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      success: false,
      error: 'insufficient_space',
      msg: expect.stringContaining('has 100 GB free, not 101'),
    });
    const elsewhere = await http()
      .put(`/api/v0/asks/${offer()}/`)
      .set(as(renterKey))
      .send({
        image: 'busybox',
        volume_info: { create_new: true, volume_id: 999999, size: 10, mount_path: '/data' },
      });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body).toMatchObject({ success: false, error: 'no_such_volume_offer' });
    const relative = await rentWithNewVolume(10, {
      volume_info: { create_new: true, volume_id: machineId, size: 10, mount_path: 'data' },
    });
    expect(relative.status).toBe(400);
    expect(await instanceCount()).toBe(before);
  });

  it('rents with a new volume from a searched volume offer: it waits for the volume, then runs with it mounted', async () => {
    const searched = await volumeOffer();
    expect(searched).toMatchObject({ id: machineId, disk_space: 100 });
    // marketplace's side is held back a moment, so the renter can see the instance wait for its volume
    await volumes().pause();
    const created = await rentWithNewVolume(30);
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      success: true,
      new_contract: expect.any(Number),
      instance_api_key: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const id = created.body.new_contract as number;
    const waiting = await show(id);
    expect(waiting).toMatchObject({
      actual_status: null,
      status_msg: expect.stringContaining('Waiting for the volume'),
      volume_info: {
        volume_id: null,
        create_new: true,
        volume_offer_id: machineId,
        size: 30,
        mount_path: '/data',
      },
    });
    expect(h.app.get(SimulatedHostDriver, { strict: false }).provisioned(id)).toBeUndefined();
    // the key the host will need waits sealed, never in the clear
    const [pending] = await h.db.query<{ instance_api_key_sealed: string }>(
      'SELECT instance_api_key_sealed FROM instance_lifecycle.pending_provisions WHERE instance_id = $1',
      [id],
    );
    expect(pending?.instance_api_key_sealed).toMatch(/^v1:/);
    expect(pending?.instance_api_key_sealed).not.toContain(created.body.instance_api_key);
    volumes().resume();

    const running = await until(id, 'running');
    const volumeId = (running.volume_info as { volume_id: number }).volume_id;
    expect(running.volume_info).toEqual({ volume_id: expect.any(Number), mount_path: '/data' });
    // the host got the volume as for a linked one, and the instance key
    const spec = h.app.get(SimulatedHostDriver, { strict: false }).provisioned(id);
    expect(spec?.config.volume).toEqual({ volumeId, mountPath: '/data' });
    expect(spec?.instanceApiKey).toBe(created.body.instance_api_key);
    // the volume is the renter's, like one made with `create volume`, and takes its space from the offer
    // `vastai show volumes` reads the name as `label`, and which instances the volume is mounted in
    const listed = await eventually(
      async () => {
        const rows = await myVolumes();
        return (rows[0]?.instances as number[] | undefined)?.length ? rows : undefined;
      },
      30_000,
      'the volume lists its instance',
    );
    expect(listed).toEqual([
      expect.objectContaining({
        id: volumeId,
        name: 'scratch',
        label: 'scratch',
        size: 30,
        machine_id: machineId,
        storage_cost: 0.2,
        instances: [id],
      }),
    ]);
    expect(await myVolumes(otherKey)).toEqual([]);
    expect((await volumeOffer())?.disk_space).toBe(70);
  });

  it('when the space is gone by the time marketplace creates the volume, the instance ends exited saying why', async () => {
    await volumes().pause();
    // instance-lifecycle has 70 GB free in view: the rental is accepted
    const created = await eventually(
      async () => {
        const res = await rentWithNewVolume(60);
        return res.status === 200 ? res : undefined;
      },
      30_000,
      'the rental',
    );
    const id = created.body.new_contract as number;
    // meanwhile another renter takes 60 of the 70 GB directly
    const taken = await http()
      .put('/api/v0/volumes/')
      .set(as(otherKey))
      .send({ id: machineId, size: 60 })
      .expect(200);
    volumes().resume();

    const exited = await until(id, 'exited');
    expect(exited.status_msg).toContain('the volume could not be created');
    expect(exited.status_msg).toContain('has 10 GB free now, not 60');
    expect(exited.actions).toEqual(['label', 'destroy']);
    expect(h.app.get(SimulatedHostDriver, { strict: false }).provisioned(id)).toBeUndefined();
    // no volume was made for the renter; the other renter's stands
    expect((await myVolumes()).map((v) => v.size)).toEqual([30]);
    expect((await myVolumes(otherKey)).map((v) => v.id)).toEqual([taken.body.volume_id]);
    expect((await volumeOffer())?.disk_space).toBe(10);
    // a start is refused like for any exited instance; destroy works
    const start = await http().put(`/api/v0/instances/${id}/`).set(as(renterKey)).send({ state: 'running' });
    expect(start.body).toMatchObject({ success: false, error: 'instance_cannot_start' });
    await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).expect(200);
  });

  describe('cancel_unavail', () => {
    it('fails at once, renting nothing, when the instance would wait for a new volume', async () => {
      const before = await instanceCount();
      const res = await rentWithNewVolume(5, { cancel_unavail: true });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        success: false,
        error: 'instance_unavailable',
        msg: expect.stringContaining('wait for its new volume'),
      });
      expect(await instanceCount()).toBe(before);
      expect((await volumeOffer())?.disk_space).toBe(10);
    });

    it('fails at once while the machine is in a maintenance window; without it the refusal stays offer_unavailable', async () => {
      const machine = await listedMachine({ ...HARDWARE, hostname: 'rig-maint' });
      await eventually(
        async () => ((await lowBid(machine)).status === 400 ? true : undefined),
        60_000,
        'the machine in instance-lifecycle',
      );
      await http()
        .put(`/api/v0/machines/${machine}/dnotify/`)
        .set(admin)
        .send({ sdate: Date.now() / 1000 - 60, duration: 1, maintenance_category: 'disk' })
        .expect(200);
      const refused = await eventually(
        async () => {
          const res = await lowBid(machine, { cancel_unavail: true });
          return res.status === 409 ? res : undefined;
        },
        60_000,
        'the window in instance-lifecycle',
      );
      expect(refused.body).toEqual({
        success: false,
        error: 'instance_unavailable',
        msg: expect.stringContaining(`machine ${machine} is in maintenance until`),
      });
      expect((await lowBid(machine)).body).toMatchObject({ success: false, error: 'offer_unavailable' });
    });

    it("fails at once when the machine's host agent is not connected; rents (and provisions) while it is", async () => {
      const machine = await listedMachine({ ...HARDWARE, hostname: 'rig-agent' });
      await eventually(
        async () => ((await lowBid(machine)).status === 400 ? true : undefined),
        60_000,
        'the machine in instance-lifecycle',
      );
      const port = (h.app.getHttpServer().address() as AddressInfo).port;
      const socket = new WebSocket(`ws://127.0.0.1:${port}${AGENT_CHANNEL_PATH}`, { headers: admin });
      const received: LifecycleToAgent[] = [];
      socket.on('message', (data) => received.push(JSON.parse(data.toString()) as LifecycleToAgent));
      await new Promise((resolve) => socket.on('open', resolve));
      socket.send(JSON.stringify({ type: 'hello', version: 1, machineId: machine, driver: 'raw' }));
      await eventually(
        async () => (received.some((m) => m.type === 'welcome') ? true : undefined),
        30_000,
        'the welcome',
      );

      const accepted = await http()
        .put(`/api/v0/asks/${machine * 1000 + 1}/`)
        .set(as(renterKey))
        .send({ image: 'busybox', cancel_unavail: true });
      expect(accepted.status).toBe(200);
      const id = accepted.body.new_contract as number;
      await eventually(
        async () =>
          received.some((m) => m.type === 'provision' && m.spec.instanceId === id) ? true : undefined,
        30_000,
        'the provision command',
      );

      const closed = new Promise((resolve) => socket.on('close', resolve));
      socket.close();
      await closed;
      await eventually(
        async () => ((await lowBid(machine, { cancel_unavail: true })).status === 409 ? true : undefined),
        30_000,
        'the agent gone',
      );
      const before = await instanceCount();
      const refused = await http()
        .put(`/api/v0/asks/${machine * 1000 + 2}/`)
        .set(as(renterKey))
        .send({ image: 'busybox', cancel_unavail: true });
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual({
        success: false,
        error: 'instance_unavailable',
        msg: expect.stringContaining(`the host agent of machine ${machine} is not connected`),
      });
      expect(await instanceCount()).toBe(before);
      // without cancel_unavail it is rented as before, and reported offline since no agent takes it
      const late = await http()
        .put(`/api/v0/asks/${machine * 1000 + 2}/`)
        .set(as(renterKey))
        .send({ image: 'busybox' });
      expect(late.status).toBe(200);
      expect((await until(late.body.new_contract as number, 'offline')).status_msg).toContain('Host offline');
    });
  });

  it('a stop asked while the instance waits for its volume is honoured when the host gets it', async () => {
    await volumes().pause();
    const created = await rentWithNewVolume(5);
    expect(created.status).toBe(200);
    const id = created.body.new_contract as number;
    const reboot = await http().put(`/api/v0/instances/reboot/${id}/`).set(as(renterKey));
    expect(reboot.status).toBe(409);
    expect(reboot.body).toMatchObject({ success: false, error: 'instance_waiting_for_volume' });
    await http().put(`/api/v0/instances/${id}/`).set(as(renterKey)).send({ state: 'stopped' }).expect(200);
    expect(await show(id)).toMatchObject({
      actual_status: null,
      intended_status: 'stopped',
      status_msg: expect.stringContaining('Waiting for the volume'),
    });
    volumes().resume();
    const stopped = await until(id, 'stopped');
    expect(stopped.volume_info).toEqual({ volume_id: expect.any(Number), mount_path: '/data' });
    expect(h.app.get(SimulatedHostDriver, { strict: false }).provisioned(id)?.targetState).toBe('stopped');
    await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).expect(200);
  });

  it('every read model rebuilds from the events to the same rows', async () => {
    for (const token of [INSTANCE_RUNTIME, MARKETPLACE_RUNTIME]) {
      expect(await settledRebuildMismatches(h.app.get<ContextRuntime>(token, { strict: false }))).toEqual([]);
    }
  }, 120_000);
});
