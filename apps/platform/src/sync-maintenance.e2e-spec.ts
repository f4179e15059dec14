import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '@rigmarket/instance-lifecycle';
import { MARKETPLACE_RUNTIME } from '@rigmarket/marketplace-api';
import { SYNC_RUNTIME } from '@rigmarket/sync-maintenance';
import { BOTH_MODES, eventually } from '@rigmarket/testing';
import request from 'supertest';
import {
  type SimulatedRentalPlatform,
  startSimulatedRentalPlatform,
} from './testing/simulated-rental-platform';

/**
 * sync-maintenance over HTTP with the other contexts: maintenance windows (owner only, listed, visible
 * in offers and on renters' instances, canceled), and remote syncs (owner only, every error of the
 * spec). Hosts are simulated, so copies fail with a clear message (the Docker copy has its own spec).
 */
const ADMIN_KEY = 'admin-sync-maint-key-0123456789';

interface Offer {
  id: number;
  num_gpus: number;
  end_date: number | null;
  duration: number | null;
  rentable: boolean;
}

describe.each(BOTH_MODES)('sync-maintenance over HTTP, %s', (_mode, harnessMode) => {
  let h: SimulatedRentalPlatform;
  const http = () => request(h.app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });
  const admin = as(ADMIN_KEY);
  let adminUserId: number;
  let renterKey: string;
  let renterUserId: number;
  let otherKey: string;
  let machineId: number;
  const instances: number[] = [];
  const now = () => Math.floor(Date.now() / 1000);

  const search = async (body: object): Promise<Offer[]> =>
    (
      await http()
        .post('/api/v0/bundles/')
        .set(as(renterKey))
        .send({ machine_id: { eq: machineId }, ...body })
        .expect(200)
    ).body.offers;
  const show = async (id: number, key = renterKey) =>
    (await http().get(`/api/v0/instances/${id}/?owner=me`).set(as(key)).expect(200)).body.instances as Record<
      string,
      unknown
    >;

  beforeAll(async () => {
    h = await startSimulatedRentalPlatform(harnessMode, {
      adminKey: ADMIN_KEY,
      users: { renter: 'renter', other: 'renter' },
      simulatedHost: { pullMs: 30, bootMs: 120, stopMs: 50 },
    });
    ({ renterKey, otherKey, machineId } = h);
    adminUserId = (await http().get('/api/v0/users/current').set(admin).expect(200)).body.id;
    renterUserId = (await http().get('/api/v0/users/current').set(as(renterKey)).expect(200)).body.id;
    // two 1-GPU instances of the renter on the machine (the first rent waits for the machine to reach instance-lifecycle)
    for (let i = 0; i < 2; i += 1) instances.push(await h.rent(renterKey));
  }, 240_000);
  afterAll(async () => {
    await h?.close();
  });

  describe('maintenance windows', () => {
    it('only the owner of a known machine schedules or cancels: anyone else gets "no such machine id"', async () => {
      // the owner's machine reaches sync-maintenance over the transport
      await eventually(
        async () => {
          const res = await http().put(`/api/v0/machines/${machineId}/cancel_maint/`).set(admin).send({});
          return res.status === 200 ? true : undefined;
        },
        60_000,
        'the machine in sync-maintenance',
      );
      for (const path of [
        `/api/v0/machines/${machineId}/cancel_maint/`,
        `/api/v0/machines/${machineId}/cancel_maint`,
      ]) {
        const res = await http()
          .put(path)
          .set(as(renterKey))
          .send({ client_id: 'me', machine_id: machineId })
          .expect(404);
        expect(res.body).toEqual({
          success: false,
          error: 'no_such_machine',
          msg: 'no such machine id',
          machine_id: machineId,
          user_id: renterUserId,
        });
      }
      const unknown = await http().put('/api/v0/machines/999999/cancel_maint/').set(admin).expect(404);
      expect(unknown.body).toEqual({
        success: false,
        error: 'no_such_machine',
        msg: 'no such machine id',
        machine_id: 999999,
        user_id: adminUserId,
      });
      const notOwner = await http()
        .put(`/api/v0/machines/${machineId}/dnotify/`)
        .set(as(otherKey))
        .send({ sdate: now() + 3600, duration: 1 })
        .expect(404);
      expect(notOwner.body).toMatchObject({
        success: false,
        msg: 'no such machine id',
        machine_id: machineId,
      });
      await http()
        .put(`/api/v0/machines/${machineId}/dnotify/`)
        .set(admin)
        .send({ sdate: 'soon', duration: 1 })
        .expect(400);
      await http()
        .put(`/api/v0/machines/${machineId}/dnotify/`)
        .set(admin)
        .send({ sdate: now() + 3600, duration: 0 })
        .expect(400);
      await http()
        .put(`/api/v0/machines/${machineId}/dnotify/`)
        .set(admin)
        .send({ sdate: now() - 7200, duration: 1 })
        .expect(400);
    });

    it("a window ahead clips offers to its start (rentals that would overlap it are excluded), shows on the renters' instances, lists, and cancels", async () => {
      const sdate = now() + 3600;
      // what `vastai schedule maint` sends (floats)
      const scheduled = await http()
        .put(`/api/v0/machines/${machineId}/dnotify/`)
        .set(admin)
        .send({ client_id: 'me', sdate: sdate + 0.0, duration: 2.0, maintenance_category: 'power' })
        .expect(200);
      expect(scheduled.body).toMatchObject({
        success: true,
        machine_id: machineId,
        start_time: sdate,
        end_time: sdate + 7200,
      });
      await http()
        .put(`/api/v0/machines/${machineId}/dnotify/`)
        .set(admin)
        .send({ sdate: sdate + 3600, duration: 1 })
        .expect(409);

      const listed = await http()
        .get(
          `/api/v0/machines/maintenances?owner=me&machine_ids=${encodeURIComponent(`[${machineId}, 999999]`)}`,
        )
        .set(admin)
        .expect(200);
      expect(listed.body).toEqual([
        {
          machine_id: machineId,
          start_time: sdate,
          end_time: sdate + 7200,
          duration_hours: 2,
          maintenance_category: 'power',
          window_id: expect.any(Number),
        },
      ]);
      expect(
        (await http().get('/api/v0/machines/maintenances/?owner=me').set(admin).expect(200)).body,
      ).toHaveLength(1);
      expect(
        (
          await http()
            .get(`/api/v0/machines/maintenances?owner=me&machine_ids=%5B${machineId}%5D`)
            .set(as(renterKey))
            .expect(200)
        ).body,
      ).toEqual([]);

      // marketplace: still rentable now, but only until the window starts
      const clipped = await eventually(
        async () => {
          const offers = await search({ rentable: { eq: true } });
          return offers.length > 0 && offers.every((o) => o.end_date === sdate) ? offers : undefined;
        },
        60_000,
        'offers clipped to the window',
      );
      expect(clipped[0]!.duration).toBeLessThanOrEqual(3600);
      expect(await search({ rentable: { eq: true }, duration: { gte: String(2 * 3600) } })).toEqual([]);
      expect((await search({ rentable: { eq: true }, duration: { gte: '600' } })).length).toBeGreaterThan(0);

      // instance-lifecycle: the renter sees the window on the instance
      const row = await eventually(
        async () => {
          const r = await show(instances[0]!);
          return r.upcoming_maintenance ? r : undefined;
        },
        60_000,
        'the window on the instance',
      );
      expect(row.upcoming_maintenance).toEqual({
        machine_id: machineId,
        start_time: sdate,
        end_time: sdate + 7200,
        duration_hours: 2,
        maintenance_category: 'power',
      });
      const v1 = await http().get('/api/v1/instances/').set(as(renterKey)).expect(200);
      expect(
        (v1.body.instances as Array<Record<string, unknown>>).every(
          (r) => (r.upcoming_maintenance as { start_time: number }).start_time === sdate,
        ),
      ).toBe(true);

      // what `vastai cancel maint` sends: a body (the spec says none; both work)
      const canceled = await http()
        .put(`/api/v0/machines/${machineId}/cancel_maint/`)
        .set(admin)
        .send({ client_id: 'me', machine_id: machineId })
        .expect(200);
      expect(canceled.body).toEqual({
        success: true,
        ctime: expect.any(Number),
        machine_id: machineId,
        msg: `deleted 1 scheduled maintenance window on machine ${machineId}`,
      });
      expect(
        (await http().get('/api/v0/machines/maintenances?owner=me').set(admin).expect(200)).body,
      ).toEqual([]);
      await eventually(
        async () =>
          (await search({ rentable: { eq: true }, duration: { gte: String(30 * 86400) } })).length > 0
            ? true
            : undefined,
        60_000,
        'offers back',
      );
      await eventually(
        async () => ((await show(instances[0]!)).upcoming_maintenance === null ? true : undefined),
        60_000,
        'the window gone from the instance',
      );
    });

    it("during a window the machine's offers are not rentable; without a body cancel deletes every pending window", async () => {
      await http()
        .put(`/api/v0/machines/${machineId}/dnotify/`)
        .set(admin)
        .send({ sdate: now() - 60, duration: 1, maintenance_category: 'disk' })
        .expect(200);
      await http()
        .put(`/api/v0/machines/${machineId}/dnotify/`)
        .set(admin)
        .send({ sdate: now() + 86400, duration: 3 })
        .expect(200);
      await eventually(
        async () => ((await search({ rentable: { eq: true } })).length === 0 ? true : undefined),
        60_000,
        'offers unrentable',
      );
      // the CLI's default search does not filter on rented and shows rentable:false rows only when asked
      const all = await search({ rentable: 'any' });
      expect(all.length).toBeGreaterThan(0);
      expect(all.every((o) => o.rentable === false)).toBe(true);
      // accepting the offer by id is refused too, once instance-lifecycle has the window
      const refused = await eventually(
        async () => {
          const res = await http()
            .put(`/api/v0/asks/${machineId * 1000 + 1}/`)
            .set(as(renterKey))
            .send({ image: 'busybox', disk: 10 });
          return res.status === 409 ? res : undefined;
        },
        60_000,
        'the window in instance-lifecycle',
      );
      expect(refused.body).toMatchObject({ success: false, error: 'offer_unavailable' });
      expect(refused.body.msg).toContain('in maintenance until');
      const canceled = await http().put(`/api/v0/machines/${machineId}/cancel_maint`).set(admin).expect(200);
      expect(canceled.body.msg).toBe(`deleted 2 scheduled maintenance windows on machine ${machineId}`);
      await eventually(
        async () => ((await search({ rentable: { eq: true } })).length > 0 ? true : undefined),
        60_000,
        'offers rentable again',
      );
    });

    it('every maintenance read model rebuilds from the events to the same rows', async () => {
      await http()
        .put(`/api/v0/machines/${machineId}/dnotify/`)
        .set(admin)
        .send({ sdate: now() + 7 * 86400, duration: 4, maintenance_category: 'upgrade' })
        .expect(200);
      const sync = h.app.get<ContextRuntime>(SYNC_RUNTIME, { strict: false });
      const market = h.app.get<ContextRuntime>(MARKETPLACE_RUNTIME, { strict: false });
      const instance = h.app.get<ContextRuntime>(INSTANCE_RUNTIME, { strict: false });
      await eventually(
        async () =>
          (await market.db.query('SELECT 1 FROM marketplace.maintenance_windows')).length === 1
            ? true
            : undefined,
        60_000,
        'marketplace',
      );
      await eventually(
        async () =>
          (await instance.db.query('SELECT 1 FROM instance_lifecycle.machine_maintenance')).length === 1
            ? true
            : undefined,
        60_000,
        'instance',
      );
      const cases: Array<[ContextRuntime, string, string]> = [
        [
          sync,
          'maintenance_windows',
          'SELECT * FROM sync_maintenance.maintenance_windows ORDER BY window_id',
        ],
        [sync, 'known_machines', 'SELECT * FROM sync_maintenance.known_machines ORDER BY machine_id'],
        [sync, 'known_instances', 'SELECT * FROM sync_maintenance.known_instances ORDER BY instance_id'],
        [market, 'maintenance_windows', 'SELECT * FROM marketplace.maintenance_windows ORDER BY window_id'],
        [
          instance,
          'machine_maintenance',
          'SELECT * FROM instance_lifecycle.machine_maintenance ORDER BY window_id',
        ],
      ];
      for (const [runtime, projection, query] of cases) {
        const before = await runtime.db.query(query);
        expect(before.length).toBeGreaterThan(0);
        await runtime.rebuild(projection);
        expect(await runtime.db.query(query)).toEqual(before);
      }
      await http().put(`/api/v0/machines/${machineId}/cancel_maint/`).set(admin).expect(200);
    });
  });

  describe('remote syncs', () => {
    const cancel = (path: 'rclone' | 'copy_direct', body: object | undefined, key = renterKey) => {
      const req = http().delete(`/api/v0/commands/${path}/`).set(as(key));
      return body === undefined ? req : req.send(body);
    };

    it('cancel answers invalid_args for a dst_id that is not an instance id, for both routes', async () => {
      for (const path of ['rclone', 'copy_direct'] as const) {
        for (const body of [
          { client_id: 'me', dst_id: 'abc' },
          { client_id: 'me' },
          { dst_id: '12x' },
          { dst_id: -3 },
          { dst_id: 1.5 },
          undefined,
        ]) {
          const res = await cancel(path, body).expect(400);
          expect(res.body).toEqual({ success: false, error: 'invalid_args', msg: 'invalid dst_id' });
        }
      }
    });

    it('cancel answers no_such_instance for an unknown instance, or one of another user', async () => {
      // the renter's instances reach sync-maintenance over the transport
      await eventually(
        async () =>
          (await cancel('rclone', { dst_id: String(instances[1]) })).status === 200 ? true : undefined,
        60_000,
        'the instances in sync-maintenance',
      );
      for (const path of ['rclone', 'copy_direct'] as const) {
        expect((await cancel(path, { client_id: 'me', dst_id: '999999' }).expect(404)).body).toEqual({
          success: false,
          error: 'no_such_instance',
          msg: 'no such instance',
        });
        expect((await cancel(path, { dst_id: instances[0] }, otherKey).expect(404)).body).toEqual({
          success: false,
          error: 'no_such_instance',
          msg: 'no such instance',
        });
      }
      // the owner, with nothing running: success, nothing canceled
      const idle = await cancel('copy_direct', { dst_id: instances[0] }).expect(200);
      expect(idle.body).toMatchObject({ success: true, job_id: null });
    });

    it("starting a copy checks both instances are the caller's; on the simulated host the job fails with a clear status_msg", async () => {
      const [src, dst] = instances as [number, number];
      const body = {
        client_id: 'me',
        src_id: String(src),
        dst_id: String(dst),
        src_path: '/workspace/',
        dst_path: '/workspace/',
      };
      expect(
        (await http().put('/api/v0/commands/copy_direct/').set(as(otherKey)).send(body).expect(404)).body
          .error,
      ).toBe('no_such_instance');
      expect(
        (
          await http()
            .put('/api/v0/commands/copy_direct/')
            .set(as(renterKey))
            .send({ ...body, dst_id: '12x' })
            .expect(400)
        ).body.msg,
      ).toBe('invalid dst_id');
      expect(
        (
          await http()
            .put('/api/v0/commands/copy_direct/')
            .set(as(renterKey))
            .send({ ...body, src_id: 'local' })
            .expect(400)
        ).body.error,
      ).toBe('invalid_args');
      const started = await http()
        .put('/api/v0/commands/copy_direct/')
        .set(as(renterKey))
        .send({ ...body, dst_id: `C.${dst}` })
        .expect(200);
      expect(started.body).toMatchObject({ success: true, job_id: expect.any(Number) });
      const row = await eventually(
        async () => {
          const r = await show(dst);
          return typeof r.status_msg === 'string' && r.status_msg.includes('failed') ? r : undefined;
        },
        60_000,
        'the failed copy in status_msg',
      );
      expect(row.status_msg).toContain('simulated host');
      expect(row.remote_sync).toMatchObject({
        job_id: started.body.job_id,
        kind: 'copy_direct',
        status: 'failed',
      });
      // a failed job is over: cancel has nothing to cancel, a new copy may start
      expect((await cancel('copy_direct', { dst_id: dst }).expect(200)).body.job_id).toBeNull();
    });

    it('a cloud copy is recorded and fails clearly: no cloud connection can be reached', async () => {
      const dst = instances[1]!;
      const res = await http()
        .post('/api/v0/commands/rclone/')
        .set(as(renterKey))
        .send({
          src: '/folder',
          dst: '/workspace',
          instance_id: String(dst),
          selected: '1001',
          transfer: 'Cloud To Instance',
          flags: ['--dry-run'],
        })
        .expect(200);
      expect(res.body).toMatchObject({ success: true, job_id: expect.any(Number) });
      // This job's failure, not the previous copy's (still on the row until the new job is projected).
      const row = await eventually(
        async () => {
          const r = await show(dst);
          const sync = r.remote_sync as { status?: string; job_id?: number } | null;
          return sync?.job_id === res.body.job_id && sync?.status === 'failed' ? r : undefined;
        },
        60_000,
        'the failed cloud copy',
      );
      expect(row.status_msg).toContain('no cloud connections');
      await http()
        .post('/api/v0/commands/rclone/')
        .set(as(renterKey))
        .send({ src: '/a', dst: '/b', instance_id: String(dst), selected: '1', transfer: 'sideways' })
        .expect(400);
      await http()
        .post('/api/v0/commands/rclone/')
        .set(as(otherKey))
        .send({
          src: '/a',
          dst: '/b',
          instance_id: String(dst),
          selected: '1',
          transfer: 'Instance To Cloud',
        })
        .expect(404);
    });

    it('the sync read models rebuild from the events to the same rows', async () => {
      const sync = h.app.get<ContextRuntime>(SYNC_RUNTIME, { strict: false });
      const instance = h.app.get<ContextRuntime>(INSTANCE_RUNTIME, { strict: false });
      for (const [runtime, projection, query] of [
        [sync, 'sync_jobs', 'SELECT * FROM sync_maintenance.sync_jobs ORDER BY job_id'],
        [instance, 'instance_syncs', 'SELECT * FROM instance_lifecycle.instance_syncs ORDER BY instance_id'],
      ] as Array<[ContextRuntime, string, string]>) {
        const before = await runtime.db.query(query);
        expect(before.length).toBeGreaterThan(0);
        await runtime.rebuild(projection);
        expect(await runtime.db.query(query)).toEqual(before);
      }
    });
  });
});
