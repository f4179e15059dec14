import { type ContextRuntime, ManualClock } from '@rigmarket/event-sourcing';
import { IDENTITY_RUNTIME, IdentityModule, RecordingMailer } from '@rigmarket/identity-2fa';
import { MARKETPLACE_RUNTIME, MarketplaceModule, ReliabilitySweep } from '@rigmarket/marketplace-api';
import {
  BOTH_MODES,
  type HarnessMode,
  type PlatformHarness,
  eventually,
  rebuildMismatches,
  startPlatform,
  uniqueName,
} from '@rigmarket/testing';
import request from 'supertest';
import { LIST_MACHINE_ASK as ASK, HOST_HARDWARE as HARDWARE } from './testing/fixtures';
import { adminInMarketplace } from './testing/users';

/**
 * marketplace-api over HTTP, composed with identity-2fa so bearer keys work: keys reach the marketplace
 * through the transport (in-process in embedded mode, Kafka in distributed mode).
 */
const ADMIN_KEY = 'admin-market-key-0123456789';

interface Harness extends PlatformHarness {
  mailer: RecordingMailer;
  /** Moved by hand where time matters (reliability); it starts at the real now. */
  clock: ManualClock;
}

async function startHarness(mode: HarnessMode): Promise<Harness> {
  const mailer = new RecordingMailer();
  const clock = new ManualClock(new Date());
  const platform = await startPlatform(
    mode,
    [IdentityModule.forRoot({ adminKey: ADMIN_KEY, mailer }), MarketplaceModule.forRoot()],
    { clock },
  );
  return { ...platform, mailer, clock };
}

/** Exactly what `vastai search offers 'gpu_name=RTX_4090 num_gpus>=2'` sends. */
const CLI_SEARCH = {
  verified: { eq: true },
  external: { eq: false },
  rentable: { eq: true },
  gpu_name: { eq: 'RTX 4090' },
  num_gpus: { gte: '2' },
  order: [['score', 'desc']],
  type: 'on-demand',
  allocated_storage: 5.0,
};

describe.each(BOTH_MODES)('marketplace over HTTP, %s', (_label, mode) => {
  let h: Harness;
  const http = () => request(h.app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });
  let machineId: number;
  let renterKey: string;

  beforeAll(async () => {
    h = await startHarness(mode);
    // The admin key reaches the marketplace's key projection through the transport.
    await eventually(
      async () =>
        (await http().get('/api/v0/machines').set(as(ADMIN_KEY))).status === 200 ? true : undefined,
      60_000,
      'the admin key in marketplace',
    );
    await adminInMarketplace(h.app.getHttpServer(), ADMIN_KEY);
    const email = `${uniqueName('renter')}@example.com`;
    await http().post('/api/v0/users/').send({ email, password: 'correct horse battery' }).expect(201);
    const code = /code is (\w+)/.exec(h.mailer.sent.find((m) => m.to === email)?.text ?? '')?.[1];
    await http().post('/api/v0/users/verify_email/').send({ email, code }).expect(200);
    const login = await http()
      .post('/api/v0/users/login/')
      .send({ username: email, password: 'correct horse battery' })
      .expect(200);
    renterKey = login.body.session_key;
    await eventually(
      async () =>
        (await http().get('/api/v0/template/').set(as(renterKey))).status === 200 ? true : undefined,
      60_000,
      'the renter key in marketplace',
    );
  }, 180_000);
  afterAll(async () => {
    await h?.close();
  });

  describe('machines (host side)', () => {
    it('registers a machine for its owner with a dlperf from the GPU table', async () => {
      const res = await http().post('/api/v0/machines/').set(as(ADMIN_KEY)).send(HARDWARE).expect(201);
      expect(res.body).toMatchObject({ success: true, machine_id: expect.any(Number) });
      machineId = res.body.machine_id;
      const mine = await http().get('/api/v0/machines?owner=me').set(as(ADMIN_KEY)).expect(200);
      const row = mine.body.machines.find((m: { id: number }) => m.id === machineId);
      expect(row).toMatchObject({
        id: machineId,
        num_gpus: 4,
        gpu_name: 'RTX 4090',
        listed: false,
        verification: 'unverified',
        hostname: 'rig-1',
      });
      expect(row.dlperf).toBeCloseTo(43.6 * 4);
      const one = await http().get(`/api/v0/machines/${machineId}?owner=me`).set(as(ADMIN_KEY)).expect(200);
      expect(Array.isArray(one.body)).toBe(true);
      expect(one.body[0].id).toBe(machineId);
      // another account sees none of it
      const other = await http().get(`/api/v0/machines/${machineId}`).set(as(renterKey)).expect(200);
      expect(other.body).toEqual([]);
    });

    it('refuses a registration without hardware, naming the fields', async () => {
      const res = await http()
        .post('/api/v0/machines/')
        .set(as(ADMIN_KEY))
        .send({ gpu_name: 'RTX 4090' })
        .expect(400);
      expect(res.body).toMatchObject({ success: false, error: 'bad_request' });
      expect(res.body.msg).toContain('num_gpus');
    });

    it('lists, verifies and prices the machine as the CLI does, and offers appear in chunks', async () => {
      const listed = await http()
        .put('/api/v0/machines/create_asks/')
        .set(as(ADMIN_KEY))
        .send({ machine: machineId, ...ASK })
        .expect(200);
      expect(listed.body).toMatchObject({ success: true });
      // unverified machines are not in the CLI's default search
      expect(
        (await http().post('/api/v0/bundles/').set(as(renterKey)).send(CLI_SEARCH).expect(200)).body.offers,
      ).toEqual([]);
      await http()
        .put(`/api/v0/machines/${machineId}/verification/`)
        .set(as(renterKey))
        .send({ verification: 'verified' })
        .expect(403);
      await http()
        .put(`/api/v0/machines/${machineId}/verification/`)
        .set(as(ADMIN_KEY))
        .send({ verification: 'verified' })
        .expect(200);

      const res = await http().post('/api/v0/bundles/').set(as(renterKey)).send(CLI_SEARCH).expect(200);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body.offers.map((o: { num_gpus: number }) => o.num_gpus).sort()).toEqual([2, 4]);
      const four = res.body.offers.find((o: { num_gpus: number }) => o.num_gpus === 4);
      expect(four).toMatchObject({
        machine_id: machineId,
        gpu_name: 'RTX 4090',
        gpu_ram: 24564,
        gpu_total_ram: 4 * 24564,
        verified: true,
        rentable: true,
        rented: false,
      });
      expect(four.dph_base).toBeCloseTo(2.0);
      expect(four.dph_total).toBeCloseTo(2.0 + (0.15 * 5) / 720);
      for (const key of [
        'cuda_max_good',
        'pcie_bw',
        'cpu_ghz',
        'cpu_cores_effective',
        'cpu_ram',
        'disk_space',
        'dph_total',
        'dlperf',
        'dlperf_per_dphtotal',
        'score',
        'inet_up',
        'inet_down',
        'reliability',
        'duration',
      ]) {
        expect(typeof four[key]).toBe('number');
      }
      // every field of an offer that the API names (docs/api.md)
      const OFFER_FIELDS = [
        'id',
        'machine_id',
        'host_id',
        'num_gpus',
        'gpu_name',
        'gpu_ram',
        'gpu_total_ram',
        'cpu_cores',
        'cpu_cores_effective',
        'cpu_ram',
        'disk_space',
        'dph_base',
        'dph_total',
        'storage_cost',
        'inet_up',
        'inet_down',
        'inet_up_cost',
        'inet_down_cost',
        'min_bid',
        'reliability',
        'dlperf',
        'dlperf_per_dphtotal',
        'flops_per_dphtotal',
        'score',
        'cuda_max_good',
        'driver_version',
        'compute_cap',
        'pcie_bw',
        'direct_port_count',
        'geolocation',
        'verified',
        'verification',
        'rentable',
        'rented',
        'external',
        'start_date',
        'end_date',
        'duration',
        'hosting_type',
      ];
      expect(Object.keys(four)).toEqual(expect.arrayContaining(OFFER_FIELDS));
      expect(four).toMatchObject({
        host_id: expect.any(Number),
        driver_version: '550.54.15',
        compute_cap: 890,
        geolocation: 'US',
        external: false,
        verification: 'verified',
      });
      expect((await http().get('/api/v0/gpu_names/unique/').expect(200)).body.gpu_names).toEqual([
        'RTX 4090',
      ]);
    });

    it('orders, limits, prices bids at min_bid, and answers PUT /search/asks/ the same', async () => {
      const byPrice = await http()
        .post('/api/v0/bundles/')
        .set(as(renterKey))
        .send({
          gpu_name: { eq: 'RTX_4090' },
          order: [['dph', 'asc']],
          limit: 2,
          type: 'ondemand',
          allocated_storage: 10,
        })
        .expect(200);
      expect(byPrice.body.offers.map((o: { num_gpus: number }) => o.num_gpus)).toEqual([1, 2]);
      const bid = await http()
        .post('/api/v0/bundles/')
        .set(as(renterKey))
        .send({
          machine_id: { eq: String(machineId) },
          num_gpus: { eq: 1 },
          type: 'bid',
          allocated_storage: 0,
        })
        .expect(200);
      expect(bid.body.offers[0].dph_total).toBeCloseTo(0.3);
      expect(bid.body.offers[0].is_bid).toBe(true);
      const asks = await http()
        .put('/api/v0/search/asks/')
        .set(as(renterKey))
        .send({ select_cols: ['*'], q: CLI_SEARCH })
        .expect(200);
      expect(asks.body.offers).toHaveLength(2);
    });

    it('searches only with a valid key: none, a wrong one, a deleted one or a reset one gets 401', async () => {
      const searches = [
        { method: 'post', path: '/api/v0/bundles/', body: CLI_SEARCH },
        { method: 'put', path: '/api/v0/search/asks/', body: { select_cols: ['*'], q: CLI_SEARCH } },
        { method: 'post', path: '/api/v0/volumes/search/', body: {} },
      ] as const;
      const status = async (key: string | undefined) => {
        const codes: number[] = [];
        for (const { method, path, body } of searches) {
          const req = http()[method](path);
          const res = await (key === undefined ? req : req.set(as(key))).send(body);
          if (res.status === 401)
            expect(res.body).toMatchObject({ success: false, error: expect.any(String) });
          codes.push(res.status);
        }
        return codes;
      };
      expect(await status(undefined)).toEqual([401, 401, 401]);
      expect(await status('badkey')).toEqual([401, 401, 401]);
      const newKey = async () =>
        (await http().post('/api/v0/auth/apikeys/').set(as(renterKey)).send({}).expect(201)).body as {
          id: number;
          key: string;
        };
      const deleted = await newKey();
      const reset = await newKey();
      for (const key of [deleted.key, reset.key])
        await eventually(
          async () => ((await status(key)).every((s) => s === 200) ? true : undefined),
          60_000,
          'a new key in marketplace',
        );
      await http().delete(`/api/v0/auth/apikeys/${deleted.id}/`).set(as(renterKey)).expect(200);
      const fresh = (
        await http().put('/api/v0/commands/reset_apikey/').set(as(reset.key)).send({}).expect(200)
      ).body.new_api_key as string;
      for (const key of [deleted.key, reset.key])
        await eventually(
          async () => ((await status(key)).every((s) => s === 401) ? true : undefined),
          60_000,
          'a revoked key refused by marketplace',
        );
      await eventually(
        async () => ((await status(fresh)).every((s) => s === 200) ? true : undefined),
        60_000,
        'the reset value in marketplace',
      );
    });

    it('refuses an unknown filter field by name, and finds nothing as an empty list', async () => {
      const bad = await http()
        .post('/api/v0/bundles/')
        .set(as(renterKey))
        .send({ gpu_nam: { eq: 'RTX 4090' } })
        .expect(400);
      expect(bad.body).toMatchObject({
        success: false,
        error: 'bad_request',
        msg: expect.stringContaining('gpu_nam'),
      });
      const none = await http()
        .post('/api/v0/bundles/')
        .set(as(renterKey))
        .send({ gpu_name: { eq: 'H100 SXM' } })
        .expect(200);
      expect(none.body).toEqual({ offers: [] });
      // `in` takes an array (the spec); a scalar is refused, not read as a list of one that finds nothing.
      for (const body of [{ num_gpus: { in: 3 } }, { gpu_name: { notin: 'RTX 4090' } }]) {
        const scalar = await http().post('/api/v0/bundles/').set(as(renterKey)).send(body).expect(400);
        expect(scalar.body).toMatchObject({
          success: false,
          error: 'bad_request',
          msg: expect.stringContaining('array'),
        });
      }
      const listed = await http()
        .post('/api/v0/bundles/')
        .set(as(renterKey))
        .send({ machine_id: { eq: machineId }, num_gpus: { in: [2, 4] } })
        .expect(200);
      expect(listed.body.offers.length).toBeGreaterThan(0);
    });

    it('changes the min bid, records heartbeats into reliability, and unlists', async () => {
      await http()
        .put(`/api/v0/machines/${machineId}/minbid/`)
        .set(as(ADMIN_KEY))
        .send({ client_id: 'me', price: 0.2 })
        .expect(200);
      const bid = await http()
        .post('/api/v0/bundles/')
        .set(as(renterKey))
        .send({ machine_id: { eq: machineId }, num_gpus: { eq: 1 }, type: 'bid', allocated_storage: 0 })
        .expect(200);
      expect(bid.body.offers[0].dph_total).toBeCloseTo(0.2);
      const beat = await http()
        .post(`/api/v0/machines/${machineId}/heartbeat/`)
        .set(as(ADMIN_KEY))
        .expect(200);
      expect(beat.body.reliability).toBeGreaterThan(0);
      const offers = await http()
        .post('/api/v0/bundles/')
        .set(as(renterKey))
        .send({ machine_id: { eq: machineId }, reliability: { gt: '0' } })
        .expect(200);
      expect(offers.body.offers.length).toBeGreaterThan(0);
      // Silent for 9 more minutes: the reliability sweep lowers the score to the share of minutes with a heartbeat.
      const reliability = async () =>
        (
          await http()
            .post('/api/v0/bundles/')
            .set(as(renterKey))
            .send({ machine_id: { eq: machineId } })
            .expect(200)
        ).body.offers[0].reliability as number;
      const before = await reliability();
      h.clock.advance(9 * 60_000);
      expect(await h.app.get(ReliabilitySweep).runOnce()).toContain(machineId);
      const decayed = await reliability();
      expect(decayed).toBeLessThan(before);
      expect(decayed).toBeGreaterThan(0);
      expect(
        (
          await http()
            .post('/api/v0/bundles/')
            .set(as(renterKey))
            .send({ machine_id: { eq: machineId }, reliability: { gte: before } })
            .expect(200)
        ).body.offers,
      ).toEqual([]);
      // a heartbeat counts again; a sweep right after it changes nothing
      const again = await http()
        .post(`/api/v0/machines/${machineId}/heartbeat/`)
        .set(as(ADMIN_KEY))
        .expect(200);
      expect(again.body.reliability).toBeGreaterThan(decayed);
      expect(await h.app.get(ReliabilitySweep).runOnce()).not.toContain(machineId);
      expect(await reliability()).toBe(again.body.reliability);
      // another host's machine is reported as missing
      await http()
        .put(`/api/v0/machines/${machineId}/minbid/`)
        .set(as(renterKey))
        .send({ price: 0.1 })
        .expect(404);
      await http().delete(`/api/v0/machines/${machineId}/asks/`).set(as(ADMIN_KEY)).send({}).expect(200);
      expect(
        (
          await http()
            .post('/api/v0/bundles/')
            .set(as(renterKey))
            .send({ machine_id: { eq: machineId } })
            .expect(200)
        ).body.offers,
      ).toEqual([]);
      expect((await http().get('/api/v0/gpu_names/unique/').expect(200)).body.gpu_names).toEqual([]);
    });
  });

  describe('volumes', () => {
    it('lists volume space (host), searches, creates, shows and deletes volumes (renter), and unlists', async () => {
      const { body: reg } = await http()
        .post('/api/v0/machines/')
        .set(as(ADMIN_KEY))
        .send({ ...HARDWARE, hostname: 'vol-rig' })
        .expect(201);
      const vm = reg.machine_id as number;
      await http()
        .put(`/api/v0/machines/${vm}/verification/`)
        .set(as(ADMIN_KEY))
        .send({ verification: 'verified' })
        .expect(200);
      const listed = await http()
        .post('/api/v0/volumes/')
        .set(as(ADMIN_KEY))
        .send({ size: 100, machine: vm, price_disk: 0.2, end_date: 4102444800.0 })
        .expect(200);
      expect(listed.body.msg).toEqual(expect.any(String));

      // what `vastai search volumes 'disk_space>50 inet_up>500' --limit 3` sends
      const cliSearch = {
        verified: { eq: true },
        external: { eq: false },
        disk_space: { gte: 1, gt: '50' },
        inet_up: { gt: '500' },
        order: [['score', 'desc']],
        limit: 3,
        allocated_storage: 1.0,
      };
      const found = await http()
        .post('/api/v0/volumes/search/')
        .set(as(renterKey))
        .send(cliSearch)
        .expect(200);
      const offer = found.body.offers.find((o: { id: number }) => o.id === vm);
      expect(offer).toMatchObject({
        id: vm,
        machine_id: vm,
        disk_space: 100,
        storage_cost: 0.2,
        geolocation: 'US',
        verification: 'verified',
      });
      expect(typeof offer.start_date === 'undefined' || typeof offer.start_date === 'number').toBe(true);
      await http()
        .post('/api/v0/volumes/search/')
        .set(as(renterKey))
        .send({ disk_spac: { gt: 1 } })
        .expect(400);

      const created = await http()
        .put('/api/v0/volumes/')
        .set(as(renterKey))
        .send({ size: 20, id: vm, name: 'myvol' })
        .expect(200);
      expect(created.body).toMatchObject({ success: true, volume_id: expect.any(Number) });
      await http().put('/api/v0/volumes/').set(as(renterKey)).send({ size: 81, id: vm }).expect(400);
      const after = await http()
        .post('/api/v0/volumes/search/')
        .set(as(renterKey))
        .send({ machine_id: { eq: vm } })
        .expect(200);
      expect(after.body.offers[0].disk_space).toBe(80);

      const shown = await http()
        .get('/api/v0/volumes?owner=me&type=all_volume')
        .set(as(renterKey))
        .expect(200);
      expect(shown.body.volumes).toEqual([
        expect.objectContaining({
          id: created.body.volume_id,
          name: 'myvol',
          size: 20,
          machine_id: vm,
          start_date: expect.any(Number),
        }),
      ]);
      await http()
        .delete(`/api/v0/volumes/?id=${created.body.volume_id}`)
        .set(as(ADMIN_KEY))
        .send({})
        .expect(404);
      await http()
        .delete(`/api/v0/volumes/?id=${created.body.volume_id}`)
        .set(as(renterKey))
        .send({})
        .expect(200);
      expect((await http().get('/api/v0/volumes').set(as(renterKey)).expect(200)).body.volumes).toEqual([]);

      const unlisted = await http()
        .post('/api/v0/volumes/unlist')
        .set(as(ADMIN_KEY))
        .send({ id: vm })
        .expect(200);
      expect(unlisted.body.msg).toEqual(expect.any(String));
      expect(
        (
          await http()
            .post('/api/v0/volumes/search/')
            .set(as(renterKey))
            .send({ machine_id: { eq: vm } })
            .expect(200)
        ).body.offers,
      ).toEqual([]);
    });

    it("never overbooks a machine's volume space, even with concurrent creations; a deleted volume gives its space back", async () => {
      const { body: reg } = await http()
        .post('/api/v0/machines/')
        .set(as(ADMIN_KEY))
        .send({ ...HARDWARE, hostname: 'vol-race' })
        .expect(201);
      const vm = reg.machine_id as number;
      await http()
        .post('/api/v0/volumes/')
        .set(as(ADMIN_KEY))
        .send({ size: 100, machine: vm, price_disk: 0.2, end_date: 4102444800.0 })
        .expect(200);
      const attempts = await Promise.all(
        Array.from({ length: 10 }, () =>
          http().put('/api/v0/volumes/').set(as(renterKey)).send({ size: 20, id: vm }),
        ),
      );
      const won = attempts.filter((r) => r.status === 200);
      expect(won).toHaveLength(5);
      for (const lost of attempts.filter((r) => r.status !== 200))
        expect(lost.body).toMatchObject({ success: false, error: 'insufficient_space' });
      await http()
        .delete(`/api/v0/volumes/?id=${won[0]!.body.volume_id}`)
        .set(as(renterKey))
        .send({})
        .expect(200);
      await http().put('/api/v0/volumes/').set(as(renterKey)).send({ size: 20, id: vm }).expect(200);
      await http().put('/api/v0/volumes/').set(as(renterKey)).send({ size: 1, id: vm }).expect(400);
    });
  });

  describe('billing ledger', () => {
    it('lets an admin grant credit, and shows it on invoices and credit', async () => {
      const me = await http().get('/api/v0/users/current').set(as(renterKey)).expect(200);
      await http()
        .post('/api/v0/credit/')
        .set(as(renterKey))
        .send({ user_id: me.body.id, amount: 5 })
        .expect(403);
      await http()
        .post('/api/v0/credit/')
        .set(as(ADMIN_KEY))
        .send({ user_id: me.body.id, amount: -5 })
        .expect(400);
      const granted = await http()
        .post('/api/v0/credit/')
        .set(as(ADMIN_KEY))
        .send({ user_id: me.body.id, amount: 25.5, note: 'welcome' })
        .expect(200);
      expect(granted.body).toMatchObject({ success: true, credit: 25.5 });
      const invoices = await http().get('/api/v0/users/me/invoices').set(as(renterKey)).expect(200);
      expect(invoices.body.current).toEqual({ credit: 25.5, charges: 0 });
      expect(invoices.body.invoices).toEqual([
        expect.objectContaining({ type: 'credit', amount: 25.5, description: 'welcome' }),
      ]);
      expect((await http().get('/api/v0/users/me/credit').set(as(renterKey)).expect(200)).body.credit).toBe(
        25.5,
      );
      expect((await http().get('/api/v0/charges/').set(as(renterKey)).expect(200)).body.charges).toEqual([]);
      expect(
        (await http().get('/api/v0/users/me/earnings').set(as(ADMIN_KEY)).expect(200)).body,
      ).toMatchObject({ earnings: [], machines: {} });
      // identity-2fa shows the same balance on the current user, from its projection of the ledger events
      await eventually(
        async () => {
          const current = await http().get('/api/v0/users/current/').set(as(renterKey));
          return current.body.credit === 25.5 ? true : undefined;
        },
        15_000,
        'credit on users/current',
      );
      // ...and that read model rebuilds from marketplace's event store to the same rows
      const identity = h.app.get<ContextRuntime>(IDENTITY_RUNTIME, { strict: false });
      const before = await identity.db.query('SELECT * FROM identity.user_credit ORDER BY user_id');
      expect(await identity.rebuild('user_credit')).toBeGreaterThan(0);
      expect(await identity.db.query('SELECT * FROM identity.user_credit ORDER BY user_id')).toEqual(before);
    });
  });

  describe('templates', () => {
    /** What `vastai create template ...` sends (docs/client-compat.md 2.11). */
    const CLI_CREATE = {
      name: 't1',
      image: 'pytorch/pytorch',
      tag: 'latest',
      href: null,
      repo: null,
      env: '-p 8080:8080',
      onstart: 'echo hi',
      jup_direct: false,
      ssh_direct: true,
      use_jupyter_lab: false,
      runtype: 'ssh',
      use_ssh: true,
      jupyter_dir: null,
      docker_login_repo: null,
      extra_filters: {
        verified: { eq: true },
        external: { eq: false },
        rentable: { eq: true },
        gpu_ram: { gte: 23000.0 },
        num_gpus: { eq: '1' },
      },
      recommended_disk_space: '20',
      readme: 'r',
      readme_visible: true,
      desc: 'd',
      private: true,
    };

    it('stores an object env as env pairs (bad keys 400), and an edit removes an extra_filters key given null', async () => {
      const create = (body: object) =>
        http()
          .post('/api/v0/template/')
          .set(as(renterKey))
          .send({ name: uniqueName('envobj'), image: 'busybox', ...body });
      const made = await create({
        env: { A: '1', B: 'two words', '-p 80:80': '1' },
        extra_filters: { num_gpus: { eq: '1' }, gpu_ram: { gte: 23000 } },
      }).expect(200);
      expect(made.body.template).toMatchObject({ env: '-e A=1 -e "B=two words" -p 80:80' });
      for (const env of [{ '-p 80:80 1': '1' }, { 'NOT A NAME': '1' }, { '-p 80:80': 'x' }]) {
        const bad = await create({ env }).expect(400);
        expect(bad.body).toMatchObject({
          success: false,
          error: 'bad_request',
          msg: expect.stringContaining('env'),
        });
      }
      const edited = await http()
        .put('/api/v0/template/')
        .set(as(renterKey))
        .send({
          hash_id: made.body.template.hash_id,
          extra_filters: { gpu_ram: null, verified: { eq: true } },
        })
        .expect(200);
      expect(edited.body.template.extra_filters).toEqual({ num_gpus: { eq: '1' }, verified: { eq: true } });
      await http()
        .delete('/api/v0/template/')
        .set(as(renterKey))
        .send({ template_id: made.body.template.id })
        .expect(200);
    });

    it('creates, edits (only non-null fields, new hash), searches and deletes by id or hash_id', async () => {
      const created = await http().post('/api/v0/template/').set(as(renterKey)).send(CLI_CREATE).expect(200);
      expect(created.body).toMatchObject({
        success: true,
        template: { id: expect.any(Number), hash_id: expect.stringMatching(/^[0-9a-f]{32}$/), name: 't1' },
      });
      const t = created.body.template;
      expect(t).toMatchObject({
        env: '-p 8080:8080',
        recommended_disk_space: 20,
        docker_login_repo: '',
        docker_login_user: '',
        docker_login_pass: '',
        private: true,
      });

      const edited = await http()
        .put('/api/v0/template/')
        .set(as(renterKey))
        .send({
          ...Object.fromEntries(Object.keys(CLI_CREATE).map((k) => [k, null])),
          hash_id: t.hash_id,
          desc: 'new desc',
          jup_direct: false,
        })
        .expect(200);
      expect(edited.body.template).toMatchObject({
        id: t.id,
        name: 't1',
        image: 'pytorch/pytorch',
        desc: 'new desc',
        env: '-p 8080:8080',
        recommended_disk_space: 20,
      });
      expect(edited.body.template.hash_id).not.toBe(t.hash_id);
      // the old hash no longer edits
      await http()
        .put('/api/v0/template/')
        .set(as(renterKey))
        .send({ hash_id: t.hash_id, desc: 'x' })
        .expect(404);
      // vastai 1.9 edits through /api/v1/template/ with id and hash_id
      const v1 = await http()
        .put('/api/v1/template/')
        .set(as(renterKey))
        .send({ id: t.id, hash_id: edited.body.template.hash_id, readme: 'r2', extra_filters: {} })
        .expect(200);
      expect(v1.body.template).toMatchObject({
        readme: 'r2',
        desc: 'new desc',
        extra_filters: CLI_CREATE.extra_filters,
      });

      const search = await http()
        .get('/api/v0/template/')
        .query({
          select_cols: '["*"]',
          select_filters: JSON.stringify({
            name: { eq: 't1' },
            recommended_disk_space: { gte: '10' },
            id: { in: [String(t.id)] },
          }),
        })
        .set(as(renterKey))
        .expect(200);
      expect(search.body.templates.map((x: { id: number }) => x.id)).toEqual([t.id]);
      // private: not visible to another account
      const other = await http()
        .get('/api/v0/template/')
        .query({ select_filters: JSON.stringify({ id: { eq: t.id } }) })
        .set(as(ADMIN_KEY))
        .expect(200);
      expect(other.body.templates).toEqual([]);
      await http().delete('/api/v0/template/').set(as(ADMIN_KEY)).send({ template_id: t.id }).expect(404);
      const unknown = await http()
        .get('/api/v0/template/')
        .query({ select_filters: JSON.stringify({ bogus: { eq: 1 } }) })
        .set(as(renterKey))
        .expect(400);
      expect(unknown.body.msg).toContain('bogus');

      const deleted = await http()
        .delete('/api/v0/template/')
        .set(as(renterKey))
        .send({ template_id: t.id })
        .expect(200);
      expect(deleted.body.success).toBe(true);
      const second = await http()
        .post('/api/v0/template/')
        .set(as(renterKey))
        .send({ ...CLI_CREATE, name: 't2', private: false })
        .expect(200);
      await http()
        .delete('/api/v0/template/')
        .set(as(renterKey))
        .send({ hash_id: second.body.template.hash_id })
        .expect(200);
      const after = await http()
        .get('/api/v0/template/')
        .query({ select_filters: JSON.stringify({ creator_id: { eq: t.creator_id } }) })
        .set(as(renterKey))
        .expect(200);
      expect(after.body.templates).toEqual([]);
    });

    it('refuses a template without name or image, and search without user_read', async () => {
      const res = await http().post('/api/v0/template/').set(as(renterKey)).send({ image: 'x' }).expect(400);
      expect(res.body.msg).toContain('name');
      const scoped = await http()
        .post('/api/v0/auth/apikeys/')
        .set(as(ADMIN_KEY))
        .send({ permissions: { api: { instance_read: {} } } })
        .expect(201);
      await eventually(
        async () =>
          (await http().get('/api/v0/template/').set(as(scoped.body.key))).status === 403 ? true : undefined,
        60_000,
        'scoped key',
      );
    });
  });

  describe('read models', () => {
    it('rebuilds every marketplace read model from the events of this suite to the same rows', async () => {
      const runtime = h.app.get<ContextRuntime>(MARKETPLACE_RUNTIME, { strict: false });
      // Heartbeats are liveness rows, not events: the suite's heartbeats are there, and no heartbeat event.
      const beats = await runtime.db.query<{ n: number }>(
        'SELECT count(DISTINCT machine_id)::int AS n FROM marketplace.machine_liveness',
      );
      expect(beats[0]!.n).toBeGreaterThan(0);
      const heartbeatEvents = await runtime.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM marketplace.events WHERE type = 'MachineHeartbeat'`,
      );
      expect(heartbeatEvents[0]!.n).toBe(0);
      expect(await rebuildMismatches(runtime)).toEqual([]);
    }, 60_000);
  });
});
