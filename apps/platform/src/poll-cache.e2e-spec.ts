import { isDeepStrictEqual } from 'node:util';
import { ManualClock } from '@rigmarket/event-sourcing';
import { BOTH_MODES, type HarnessMode, eventually } from '@rigmarket/testing';
import request from 'supertest';
import {
  type SimulatedRentalPlatform,
  startSimulatedRentalPlatform,
} from './testing/simulated-rental-platform';

const ADMIN_KEY = 'admin-poll-cache-key-0123456789';
const HOUR = 3600 * 1000;

type Row = Record<string, unknown> & { id: number };

/**
 * The renter's poll (GET /api/v0/instances/) is answered from a per-owner cache (list-all-instances.query.ts):
 * after every kind of change the answer is what a fresh read gives (the v1 listing, never cached, reads the
 * same rows), a renter sees its own changes on the very next poll, an answer lapses when a maintenance
 * window it shows ends or a finished sync's notice expires (by the platform's clock), and an owner never
 * gets another's answer.
 */
describe.each(BOTH_MODES)('the poll answer cache, %s', (_name, mode: HarnessMode) => {
  let h: SimulatedRentalPlatform;
  const clock = new ManualClock(new Date());
  const http = () => request(h.app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });
  const admin = as(ADMIN_KEY);
  let renterKey: string;
  let otherKey: string;
  let machineId: number;
  const ids: number[] = [];

  const poll = async (key = renterKey): Promise<{ instances_found: number; instances: Row[] }> => {
    const res = await http().get('/api/v0/instances/?owner=me').set(as(key)).expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    return res.body;
  };
  const fresh = async (key = renterKey): Promise<Row[]> =>
    (await http().get('/api/v1/instances/').set(as(key)).expect(200)).body.instances;
  /**
   * Polls twice (the second from the cache) between two fresh reads, until the two fresh reads agree (the
   * simulated host may be moving the instance meanwhile), and checks the polls against them.
   */
  const pollMatchesFresh = async (key = renterKey): Promise<Row[]> =>
    eventually(
      async () => {
        const before = await fresh(key);
        const first = await poll(key);
        const second = await poll(key);
        const after = await fresh(key);
        if (!isDeepStrictEqual(before, after)) return undefined;
        expect(first.instances).toEqual(before);
        expect(second.instances).toEqual(before);
        expect(second.instances_found).toBe(before.length);
        return second.instances;
      },
      30_000,
      'a stable answer',
    );
  const rowOf = async (id: number): Promise<Row | undefined> =>
    (await poll()).instances.find((r) => r.id === id);

  beforeAll(async () => {
    h = await startSimulatedRentalPlatform(mode, {
      adminKey: ADMIN_KEY,
      users: { renter: 'poller', other: 'other' },
      simulatedHost: { pullMs: 20, bootMs: 60, stopMs: 30 },
      clock,
    });
    ({ renterKey, otherKey, machineId } = h);
  }, 240_000);
  afterAll(async () => {
    await h?.close();
  });

  it('shows a rent, a label, the host reports and a stop on the very next poll, equal to a fresh read', async () => {
    expect(await pollMatchesFresh()).toEqual([]);
    const id = await h.rent(renterKey);
    ids.push(id);
    // Read-your-writes: no waiting.
    expect((await rowOf(id))?.id).toBe(id);
    await pollMatchesFresh();

    // The simulated host's reports move the instance to running (no request of the renter's).
    await eventually(
      async () => ((await rowOf(id))?.actual_status === 'running' ? true : undefined),
      60_000,
      'the host report in the poll',
    );
    await pollMatchesFresh();

    // A client that kept the ETag is told nothing changed, until something did. A host report landing
    // between the two requests is a change too (a 200 is right then): the pair is taken again.
    const tag = await eventually(
      async () => {
        const tagged = await http().get('/api/v0/instances/').set(as(renterKey)).expect(200);
        const again = await http()
          .get('/api/v0/instances/')
          .set(as(renterKey))
          .set('If-None-Match', tagged.headers.etag!);
        return again.status === 304 ? tagged.headers.etag! : undefined;
      },
      30_000,
      'a 304 for an unchanged answer',
    );
    await http().put(`/api/v0/instances/${id}/`).set(as(renterKey)).send({ label: 'cached' }).expect(200);
    await http().get('/api/v0/instances/').set(as(renterKey)).set('If-None-Match', tag).expect(200);
    expect((await rowOf(id))?.label).toBe('cached');
    await pollMatchesFresh();

    await http().put(`/api/v0/instances/${id}/`).set(as(renterKey)).send({ state: 'stopped' }).expect(200);
    expect((await rowOf(id))?.intended_status).toBe('stopped');
    await pollMatchesFresh();
  });

  it('never answers an owner with another owner’s instances', async () => {
    const mine = await pollMatchesFresh();
    expect(mine.length).toBeGreaterThan(0);
    const others = await pollMatchesFresh(otherKey);
    expect(others).toEqual([]);
    const otherId = await h.rent(otherKey);
    expect((await poll(otherKey)).instances.map((r) => r.id)).toEqual([otherId]);
    expect((await poll()).instances.map((r) => r.id)).not.toContain(otherId);
    await http().delete(`/api/v0/instances/${otherId}/`).set(as(otherKey)).send({}).expect(200);
    expect((await poll(otherKey)).instances).toEqual([]);
  });

  it('shows a maintenance window once it is scheduled and drops it when its end passes by the clock', async () => {
    const id = ids[0]!;
    await eventually(
      async () =>
        (await http().put(`/api/v0/machines/${machineId}/cancel_maint/`).set(admin).send({})).status === 200
          ? true
          : undefined,
      60_000,
      'the machine in sync-maintenance',
    );
    const sdate = Math.floor(clock.now().getTime() / 1000) + 3600;
    await http()
      .put(`/api/v0/machines/${machineId}/dnotify/`)
      .set(admin)
      .send({ client_id: 'me', sdate: sdate + 0.0, duration: 1.0, maintenance_category: 'power' })
      .expect((res) => expect([res.status, res.body]).toEqual([200, expect.anything()]));
    const shown = await eventually(
      async () => {
        const row = await rowOf(id);
        return row?.upcoming_maintenance ? row : undefined;
      },
      60_000,
      'the window in the poll',
    );
    expect(shown.upcoming_maintenance).toMatchObject({ start_time: sdate, end_time: sdate + 3600 });
    await pollMatchesFresh();
    // Nothing changes in the read models; only the time passes the window's end.
    clock.advance(2 * HOUR - 1000);
    expect((await rowOf(id))?.upcoming_maintenance).not.toBeNull();
    clock.advance(1000);
    expect((await rowOf(id))?.upcoming_maintenance).toBeNull();
    await pollMatchesFresh();
  });

  it("shows a finished sync's notice, and the instance's own message once the notice lapses", async () => {
    const dst = ids[0]!;
    const src = await h.rent(renterKey);
    ids.push(src);
    // The new instance reaches sync-maintenance over the transport first.
    await eventually(
      async () =>
        (
          await http()
            .put('/api/v0/commands/copy_direct/')
            .set(as(renterKey))
            .send({
              client_id: 'me',
              src_id: String(src),
              dst_id: `C.${dst}`,
              src_path: '/workspace/',
              dst_path: '/workspace/',
            })
        ).status === 200
          ? true
          : undefined,
      60_000,
      'the copy to start',
    );
    const failed = await eventually(
      async () => {
        const row = await rowOf(dst);
        return typeof row?.status_msg === 'string' && row.status_msg.includes('failed') ? row : undefined;
      },
      60_000,
      'the finished (failed) copy in the poll',
    );
    expect(failed.remote_sync).toMatchObject({ kind: 'copy_direct', status: 'failed' });
    await pollMatchesFresh();
    clock.advance(HOUR + 60_000);
    const after = await rowOf(dst);
    expect(after?.status_msg ?? '').not.toContain('failed');
    expect(after?.remote_sync).toMatchObject({ status: 'failed' });
    await pollMatchesFresh();
  });

  it('sends a cached answer only to a key the route admits, with its refusals, and counts it under the route', async () => {
    // The renter's answer is cached (cached-poll.middleware.ts sends it before the route's guard).
    const cached = (await pollMatchesFresh()).map((r) => r.id);
    expect(cached.length).toBeGreaterThan(0);
    const refusedWith = async (key: string | undefined, status: number) => {
      const req = http().get('/api/v0/instances/');
      const res = await (key === undefined ? req : req.set(as(key)));
      expect(res.status).toBe(status);
      return res.body as { success: boolean; error: string; msg: string };
    };
    expect(await refusedWith(undefined, 401)).toMatchObject({ success: false, error: 'missing_key' });
    expect(await refusedWith('not-a-key', 401)).toMatchObject({ success: false, error: 'invalid_key' });
    /**
     * Once instance-lifecycle answers `key` with `status` (a key change reaches it over the transport), two
     * more polls get the same refusal (the key cache and the answer cache warm by then); the refusal.
     */
    const refusedOnceKnown = async (key: string, status: number, what: string) => {
      await eventually(
        async () =>
          (await http().get('/api/v0/instances/').set(as(key))).status === status ? true : undefined,
        60_000,
        what,
      );
      const first = await refusedWith(key, status);
      expect(await refusedWith(key, status)).toEqual(first);
      return first;
    };

    // A key of the renter's without instance_read: 403 every time, its key found in the key cache or not.
    const writeOnly = (
      await http()
        .post('/api/v0/auth/apikeys/')
        .set(as(renterKey))
        .send({ name: 'no-read', permissions: { api: { instance_write: {} } } })
        .expect(201)
    ).body.key as string;
    expect(await refusedOnceKnown(writeOnly, 403, 'the scoped key in instance-lifecycle')).toEqual({
      success: false,
      error: 'forbidden',
      msg: expect.stringContaining('instance_read'),
    });

    // An instance key of one of the renter's instances: the route refuses it.
    const rented = await http()
      .put(`/api/v0/asks/${machineId * 1000 + 1}/`)
      .set(as(renterKey))
      .send({ image: 'busybox', disk: 10 })
      .expect(200);
    const rentedId = rented.body.new_contract as number;
    ids.push(rentedId);
    // Running before the answers below are compared: the host's reports would change them meanwhile.
    await eventually(
      async () => ((await rowOf(rentedId))?.actual_status === 'running' ? true : undefined),
      60_000,
      'the second instance running',
    );
    await pollMatchesFresh();
    const instanceKey = rented.body.instance_api_key as string;
    expect(await refusedOnceKnown(instanceKey, 403, 'the instance key in instance-lifecycle')).toMatchObject({
      success: false,
      error: 'forbidden',
    });

    // A second full key of the renter's gets the same cached answer, until it is deleted.
    const created = await http().post('/api/v0/auth/apikeys/').set(as(renterKey)).send({ name: 'second' });
    expect(created.status).toBe(201);
    const second = created.body.key as string;
    await eventually(
      async () =>
        (await http().get('/api/v0/instances/').set(as(second))).status === 200 ? true : undefined,
      60_000,
      'the second key in instance-lifecycle',
    );
    const mine = await pollMatchesFresh();
    expect(await pollMatchesFresh(second)).toEqual(mine);
    await http().delete(`/api/v0/auth/apikeys/${created.body.id}/`).set(as(renterKey)).send({}).expect(200);
    expect(await refusedOnceKnown(second, 401, 'the deleted key refused')).toMatchObject({
      success: false,
      error: 'invalid_key',
    });

    // A cached answer is counted under the route's pattern and context, as the route's own answers are.
    const count = async (): Promise<number> => {
      const text = (await http().get('/metrics').expect(200)).text;
      const line = text
        .split('\n')
        .find(
          (l) =>
            l.startsWith('rigmarket_http_request_duration_seconds_count{') &&
            l.includes('context="instance"') &&
            l.includes('method="GET"') &&
            l.includes('route="/api/v0/instances"') &&
            l.includes('status="200"'),
        );
      return Number(line?.split(' ').pop() ?? 0);
    };
    await poll();
    const before = await count();
    await poll();
    await poll();
    expect(await count()).toBe(before + 2);
  });

  it('drops a destroyed instance on the very next poll', async () => {
    for (const id of ids) {
      await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).send({}).expect(200);
      expect((await poll()).instances.map((r) => r.id)).not.toContain(id);
    }
    expect(await pollMatchesFresh()).toEqual([]);
  });
});
