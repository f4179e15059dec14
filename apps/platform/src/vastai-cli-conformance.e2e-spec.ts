import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Database } from '@rigmarket/event-sourcing';
import { RecordingMailer } from '@rigmarket/identity-2fa';
import { InProcessTransport } from '@rigmarket/messaging';
import { eventually } from '@rigmarket/testing';
import request from 'supertest';
import { createEmbeddedApp } from './platform';
import { HOST_HARDWARE } from './testing/fixtures';
import { grantCredit, verifiedUser } from './testing/users';
import { VASTAI_CLI, runVastai } from './testing/vastai-cli';

const ADMIN_KEY = 'cli-conformance-admin-key';

/**
 * The CLI conformance suite's remaining commands (issue 14; docs/client-compat.md lists each of the 139 with
 * where it is tested): one test per command of the real pinned `vastai` CLI, each effect checked with a
 * follow-up command. The host is the admin account; a renter rents; a stranger checks that nobody reaches
 * another account's machines, volumes or instances. Billing runs every second here, so charges and earnings
 * appear while the suite runs.
 */
describe('the vastai CLI: host, volume, instance and account commands (conformance)', () => {
  let app: INestApplication;
  let db: Database;
  let url: string;
  const mailer = new RecordingMailer();
  const home = mkdtempSync(join(tmpdir(), 'vast-conformance-'));
  // The CLI caches instance addresses under HOME (scp-url, ssh-url): the stranger has a machine of its own.
  const strangerHome = mkdtempSync(join(tmpdir(), 'vast-conformance-stranger-'));
  let renterKey: string;
  let strangerKey: string;
  let machine: number;
  let spareMachine: number;
  let onDemand: number;
  let bid: number;

  const as = (key: string | undefined, ...args: string[]) =>
    runVastai({ url, home: key === strangerKey ? strangerHome : home, key }, args);
  const raw = async <T>(key: string, ...args: string[]): Promise<T> =>
    JSON.parse((await as(key, ...args, '--raw')).stdout) as T;
  const http = () => request(app.getHttpServer());
  const instance = (id: number) => raw<Record<string, unknown>>(renterKey, 'show', 'instance', String(id));
  const until = <T>(what: string, probe: () => Promise<T | undefined>) => eventually(probe, 30_000, what);

  beforeAll(async () => {
    if (!existsSync(VASTAI_CLI))
      throw new Error(`No vastai CLI at ${VASTAI_CLI}: run bash scripts/vastai-cli.sh`);
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    app = await createEmbeddedApp({
      db,
      transport: new InProcessTransport(),
      identity: { adminKey: ADMIN_KEY, mailer },
      marketplace: { billingIntervalMs: 1_000 },
    });
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    const register = async (hostname: string, gpu_name: string) =>
      (
        await http()
          .post('/api/v0/machines/')
          .set({ Authorization: `Bearer ${ADMIN_KEY}` })
          .send({ ...HOST_HARDWARE, hostname, gpu_name })
          .expect(201)
      ).body.id as number;
    machine = await register('conformance-a', 'RTX 4090');
    spareMachine = await register('conformance-b', 'RTX 3090');
    for (const id of [machine, spareMachine]) {
      await http()
        .put(`/api/v0/machines/${id}/verification/`)
        .set({ Authorization: `Bearer ${ADMIN_KEY}` })
        .send({ verification: 'verified' })
        .expect(200);
    }
    renterKey = await verifiedUser(app.getHttpServer(), mailer, 'conformance-renter');
    strangerKey = await verifiedUser(app.getHttpServer(), mailer, 'conformance-stranger');
    await grantCredit(app.getHttpServer(), ADMIN_KEY, renterKey);
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it('vastai help: lists the commands', async () => {
    const { out } = await as(undefined, 'help');
    expect(out).toContain('usage: vastai');
    expect(out).toContain('search offers');
  });

  it('vastai set role: host shows the host commands in --help, client hides them', async () => {
    expect((await as(undefined, 'set', 'role', 'client')).out).toContain("CLI role set to 'client'");
    expect((await as(undefined, '--help')).out).not.toContain('list machine');
    expect((await as(undefined, 'set', 'role', 'host')).out).toContain("CLI role set to 'host'");
    expect((await as(undefined, '--help')).out).toContain('list machine');
  });

  it('vastai set api-key: later commands without a key act as that account', async () => {
    await as(undefined, 'set', 'api-key', renterKey);
    expect(readFileSync(join(home, '.config/vastai/vast_api_key'), 'utf8').trim()).toBe(renterKey);
    const me = JSON.parse((await as(undefined, 'show', 'user', '--raw')).stdout) as { email: string };
    expect(me.email).toMatch(/^conformance-renter/);
  });

  it('vastai list machines: lists several machines at once, their offers searchable', async () => {
    const listed = await as(
      ADMIN_KEY,
      'list',
      'machines',
      String(machine),
      String(spareMachine),
      '-g',
      '0.4',
      '-s',
      '0.1',
      '-b',
      '0.2',
      '-e',
      '12/31/2030',
    );
    expect(listed.out).toContain(`offers created/updated for machine ${machine}`);
    expect(listed.out).toContain(`offers created/updated for machine ${spareMachine}`);
    const offers = await raw<{ machine_id: number }[]>(
      renterKey,
      'search',
      'offers',
      `machine_id=${machine}`,
    );
    expect(offers.length).toBeGreaterThan(0);
    expect(offers.every((o) => o.machine_id === machine)).toBe(true);
  });

  it('vastai show machines: the host sees both machines, listed at the price set', async () => {
    const { machines } = await raw<{ machines: { id: number; listed: boolean; listed_gpu_cost: number }[] }>(
      ADMIN_KEY,
      'show',
      'machines',
    );
    expect(machines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: machine, listed: true, listed_gpu_cost: 0.4 }),
        expect.objectContaining({ id: spareMachine, listed: true, listed_gpu_cost: 0.4 }),
      ]),
    );
    const table = (await as(ADMIN_KEY, 'show', 'machines', '--no-color')).out;
    expect(table).toContain('RTX_4090');
    expect(table).toContain('RTX_3090');
    // another account has no machines
    expect((await raw<{ machines: unknown[] }>(strangerKey, 'show', 'machines')).machines).toEqual([]);
  });

  it('vastai set min-bid: the machine shows the new minimum bid; another account cannot change it', async () => {
    expect((await as(ADMIN_KEY, 'set', 'min-bid', String(machine), '--price', '0.25')).out).toContain(
      'min bid price changed',
    );
    const shown = async () =>
      (await raw<{ min_bid_price: number }[]>(ADMIN_KEY, 'show', 'machine', String(machine)))[0]!;
    expect((await shown()).min_bid_price).toBe(0.25);
    expect((await as(strangerKey, 'set', 'min-bid', String(machine), '--price', '0.01')).out).not.toContain(
      'min bid price changed',
    );
    expect((await shown()).min_bid_price).toBe(0.25);
  });

  describe('volumes', () => {
    let volume: number;

    it('vastai list volume: one machine offers volume space', async () => {
      const listed = await as(ADMIN_KEY, 'list', 'volume', String(machine), '-s', '200', '-p', '0.2');
      expect(listed.out).toContain(`Volume space listed on machine(s) ${machine}`);
      const offers = await raw<{ machine_id: number; disk_space: number }[]>(
        renterKey,
        'search',
        'volumes',
        `machine_id=${machine}`,
      );
      expect(offers).toEqual([expect.objectContaining({ machine_id: machine, disk_space: 200 })]);
    });

    it('vastai list volumes: several machines at once', async () => {
      const listed = await as(
        ADMIN_KEY,
        'list',
        'volumes',
        String(machine),
        String(spareMachine),
        '-s',
        '100',
        '-p',
        '0.3',
      );
      expect(listed.out).toContain(`Volume space listed on machine(s) ${machine}, ${spareMachine}`);
      const offers = await raw<{ machine_id: number; storage_cost: number }[]>(
        renterKey,
        'search',
        'volumes',
        `machine_id=${spareMachine}`,
      );
      expect(offers).toEqual([expect.objectContaining({ machine_id: spareMachine, storage_cost: 0.3 })]);
    });

    it('vastai search volumes: filters by the query and shows a table', async () => {
      const big = await raw<{ disk_space: number }[]>(renterKey, 'search', 'volumes', 'disk_space>150');
      expect(big).toEqual([]);
      const all = await raw<{ machine_id: number }[]>(renterKey, 'search', 'volumes', 'disk_space>50');
      expect(all.map((o) => o.machine_id).sort()).toEqual([machine, spareMachine].sort());
      expect((await as(renterKey, 'search', 'volumes', '--no-color')).out).toMatch(/\$\/Gb\/Month/);
    });

    it('vastai create volume: a volume of the renter on the offer, the offer shrinks', async () => {
      const created = await as(renterKey, 'create', 'volume', String(machine), '-s', '20', '-n', 'datasets');
      volume = Number(/'volume_id': (\d+)/.exec(created.out)?.[1]);
      expect(volume).toBeGreaterThan(0);
      const [offer] = await raw<{ disk_space: number }[]>(
        renterKey,
        'search',
        'volumes',
        `machine_id=${machine}`,
      );
      expect(offer!.disk_space).toBe(80);
    });

    it('vastai show volumes: the renter sees the volume with its label; nobody else does', async () => {
      const volumes = await raw<{ id: number; label: string; size: number; machine_id: number }[]>(
        renterKey,
        'show',
        'volumes',
      );
      expect(volumes).toEqual([
        expect.objectContaining({ id: volume, label: 'datasets', size: 20, machine_id: machine }),
      ]);
      expect(await raw<unknown[]>(strangerKey, 'show', 'volumes')).toEqual([]);
    });

    it('vastai delete volume: another account cannot, the owner can; the space returns to the offer', async () => {
      expect((await as(strangerKey, 'delete', 'volume', String(volume))).out).not.toContain('deleted');
      expect(await raw<unknown[]>(renterKey, 'show', 'volumes')).toHaveLength(1);
      expect((await as(renterKey, 'delete', 'volume', String(volume))).out).toContain(
        `Volume ${volume} deleted`,
      );
      expect(await raw<unknown[]>(renterKey, 'show', 'volumes')).toEqual([]);
      const [offer] = await raw<{ disk_space: number }[]>(
        renterKey,
        'search',
        'volumes',
        `machine_id=${machine}`,
      );
      expect(offer!.disk_space).toBe(100);
    });

    it('vastai unlist volume: the volume offer leaves search', async () => {
      expect((await as(strangerKey, 'unlist', 'volume', String(spareMachine))).out).not.toContain('unlisted');
      expect(await raw<unknown[]>(renterKey, 'search', 'volumes', `machine_id=${spareMachine}`)).toHaveLength(
        1,
      );
      expect((await as(ADMIN_KEY, 'unlist', 'volume', String(spareMachine))).out).toContain('unlisted');
      expect(await raw<unknown[]>(renterKey, 'search', 'volumes', `machine_id=${spareMachine}`)).toEqual([]);
    });
  });

  describe('instances', () => {
    beforeAll(async () => {
      const offers = await raw<{ id: number }[]>(renterKey, 'search', 'offers', `machine_id=${machine}`);
      const rent = async (offer: number, ...extra: string[]) => {
        const created = await as(
          renterKey,
          'create',
          'instance',
          String(offer),
          '--image',
          'busybox',
          ...extra,
        );
        return Number(/'new_contract': (\d+)/.exec(created.out)?.[1]);
      };
      onDemand = await rent(offers[0]!.id);
      bid = await rent(offers[1]!.id, '--bid_price', '0.5');
      expect(onDemand).toBeGreaterThan(0);
      expect(bid).toBeGreaterThan(0);
      for (const id of [onDemand, bid]) {
        await until(`instance ${id} running`, async () =>
          (await instance(id)).actual_status === 'running' ? true : undefined,
        );
      }
    }, 120_000);

    it('vastai stop instances: stops several; another account stops none', async () => {
      await as(strangerKey, 'stop', 'instances', String(onDemand), String(bid));
      expect((await instance(onDemand)).intended_status).toBe('running');
      expect((await as(renterKey, 'stop', 'instances', String(onDemand), String(bid))).out).toContain(
        `stopping instance [${onDemand}, ${bid}]`,
      );
      for (const id of [onDemand, bid]) {
        await until(`instance ${id} stopped`, async () =>
          (await instance(id)).actual_status === 'stopped' ? true : undefined,
        );
      }
    });

    it('vastai start instances: starts several again', async () => {
      expect((await as(renterKey, 'start', 'instances', String(onDemand), String(bid))).out).toContain(
        `starting instance [${onDemand}, ${bid}]`,
      );
      for (const id of [onDemand, bid]) {
        await until(`instance ${id} running again`, async () =>
          (await instance(id)).actual_status === 'running' ? true : undefined,
        );
      }
    });

    it('vastai change bid: the bid instance pays the new price; another account cannot change it', async () => {
      await as(strangerKey, 'change', 'bid', String(bid), '--price', '0.9');
      expect((await instance(bid)).dph_total).toBeCloseTo(0.5, 5);
      expect((await as(renterKey, 'change', 'bid', String(bid), '--price', '0.7')).out).toContain(
        'bid price changed',
      );
      expect((await instance(bid)).dph_total).toBeCloseTo(0.7, 5);
    });

    it('vastai recycle instance: the container is recreated from its image', async () => {
      expect((await as(renterKey, 'recycle', 'instance', String(onDemand))).out).toContain(
        `Recycling instance ${onDemand}`,
      );
      const history = await until('the recycle in the history', async () => {
        const { body } = await http()
          .get(`/api/v0/instances/${onDemand}/history/`)
          .set({ Authorization: `Bearer ${renterKey}` });
        const events = body.history as { type: string; payload: { recycle?: boolean } }[];
        return events.some((e) => e.type === 'InstanceRestarted' && e.payload.recycle === true)
          ? events
          : undefined;
      });
      expect(history[0]!.type).toBe('InstanceCreated');
      await until('running after the recycle', async () =>
        (await instance(onDemand)).actual_status === 'running' ? true : undefined,
      );
    });

    it("vastai scp-url: the instance's address and SSH port as an scp URL", async () => {
      const shown = await instance(onDemand);
      expect((await as(renterKey, 'scp-url', String(onDemand))).out.trim()).toBe(
        `scp://root@${shown.ssh_host as string}:${shown.ssh_port as number}`,
      );
      expect((await as(strangerKey, 'scp-url', String(onDemand))).out).toContain('no instance found');
    });

    it('vastai show pending-price-increases: a host repricing leaves running rentals at their price, nothing pending', async () => {
      const before = (await instance(onDemand)).dph_total as number;
      await as(ADMIN_KEY, 'list', 'machine', String(machine), '-g', '0.9');
      const [offer] = await raw<{ dph_base: number }[]>(
        renterKey,
        'search',
        'offers',
        `machine_id=${machine}`,
      );
      expect(offer!.dph_base).toBeGreaterThan(before);
      expect((await as(renterKey, 'show', 'pending-price-increases')).out).toContain(
        'No pending price increases.',
      );
      expect((await instance(onDemand)).dph_total).toBeCloseTo(before, 6);
    });

    it('vastai accept price-increase: nothing to accept, the price stays', async () => {
      const before = (await instance(onDemand)).dph_total as number;
      const accepted = await as(renterKey, 'accept', 'price-increase', String(onDemand), '--yes');
      expect(accepted.out).toContain(`pending price increase no longer available for instance ${onDemand}`);
      expect((await instance(onDemand)).dph_total).toBeCloseTo(before, 6);
      // what the CLI would send for a pending row: none exists, so the answer is the stale-row 404
      for (const verb of ['accept', 'reject']) {
        const stale = await http()
          .put(`/api/v0/instances/${verb}-price-increase/`)
          .set({ Authorization: `Bearer ${renterKey}` })
          .send({ pending_price_increase_id: 1 });
        expect([stale.status, stale.body]).toEqual([
          404,
          expect.objectContaining({ success: false, error: 'no_pending_price_increase' }),
        ]);
        const malformed = await http()
          .put(`/api/v0/instances/${verb}-price-increase/`)
          .set({ Authorization: `Bearer ${renterKey}` })
          .send({ pending_price_increase_id: 'x' });
        expect([malformed.status, malformed.body.success]).toEqual([400, false]);
      }
    });

    it('vastai reject price-increase: nothing to reject, the instance runs on', async () => {
      const rejected = await as(renterKey, 'reject', 'price-increase', String(onDemand), '--yes');
      expect(rejected.out).toContain('Rejected 0 / Stale 1');
      expect((await instance(onDemand)).actual_status).toBe('running');
    });

    it('vastai show invoices: the renter sees the charges of its instances (billing runs every second)', async () => {
      const charges = await until('charges', async () => {
        const rows = await raw<{ type: string; instance_id: number | null }[]>(renterKey, 'show', 'invoices');
        const mine = rows.filter((r) => r.type === 'charge_gpu' && r.instance_id === onDemand);
        return mine.length > 0 ? rows : undefined;
      });
      expect(charges.some((r) => r.type === 'credit')).toBe(true);
      expect((await as(renterKey, 'show', 'invoices', '--no-color')).out).toContain('charge_gpu');
      expect(await raw<unknown[]>(strangerKey, 'show', 'invoices')).toEqual([]);
    });

    it('vastai show earnings: the host earns on the rented machine today, none on the other or yesterday', async () => {
      type Earnings = { earnings: { machine_id: number }[]; machines: Record<string, number> };
      const today = new Date().toISOString().slice(0, 10);
      const all = await until('earnings', async () => {
        const shown = await raw<Earnings>(ADMIN_KEY, 'show', 'earnings', '-s', today, '-e', today);
        return shown.earnings.some((e) => e.machine_id === machine) ? shown : undefined;
      });
      expect(all.machines[String(machine)]).toBeGreaterThan(0);
      const other = await raw<Earnings>(
        ADMIN_KEY,
        'show',
        'earnings',
        '-s',
        today,
        '-e',
        today,
        '-m',
        String(spareMachine),
      );
      expect(other.earnings).toEqual([]);
      // Without dates the CLI asks for yesterday, when nothing ran.
      expect((await raw<Earnings>(ADMIN_KEY, 'show', 'earnings')).earnings).toEqual([]);
      expect(
        (await raw<Earnings>(strangerKey, 'show', 'earnings', '-s', today, '-e', today)).earnings,
      ).toEqual([]);
    });
  });

  it('vastai show team-roles: the built-in roles and the custom one', async () => {
    const permissions = join(home, 'viewer.json');
    writeFileSync(permissions, JSON.stringify({ api: { instance_read: {} } }));
    await as(ADMIN_KEY, 'create', 'team-role', '--name', 'viewer', '--permissions', permissions);
    const { roles } = await raw<{ roles: { name: string; built_in: boolean }[] }>(
      ADMIN_KEY,
      'show',
      'team-roles',
    );
    expect(roles.map((r) => r.name)).toEqual(expect.arrayContaining(['owner', 'member', 'viewer']));
    expect(roles.find((r) => r.name === 'viewer')?.built_in).toBe(false);
  });

  it('vastai update team-role: renames and re-scopes a custom role; built-in roles stay as they are', async () => {
    const { roles } = await raw<{ roles: { id: number; name: string }[] }>(ADMIN_KEY, 'show', 'team-roles');
    const viewer = roles.find((r) => r.name === 'viewer')!;
    const owner = roles.find((r) => r.name === 'owner')!;
    const permissions = join(home, 'auditor.json');
    writeFileSync(permissions, JSON.stringify({ api: { instance_read: {}, billing_read: {} } }));
    await as(
      ADMIN_KEY,
      'update',
      'team-role',
      String(viewer.id),
      '--name',
      'auditor',
      '--permissions',
      permissions,
    );
    expect(
      await raw<{ name: string; permissions: string[] }>(ADMIN_KEY, 'show', 'team-role', 'auditor'),
    ).toMatchObject({
      name: 'auditor',
      permissions: expect.arrayContaining(['instance_read', 'billing_read']),
    });
    const refused = await as(
      ADMIN_KEY,
      'update',
      'team-role',
      String(owner.id),
      '--name',
      'x',
      '--permissions',
      permissions,
    );
    expect(refused.out).toContain('cannot be changed');
  });

  it('vastai unlist machine: its offers leave search; another account cannot unlist it', async () => {
    await as(strangerKey, 'unlist', 'machine', String(spareMachine));
    expect(await raw<unknown[]>(renterKey, 'search', 'offers', `machine_id=${spareMachine}`)).not.toEqual([]);
    expect((await as(ADMIN_KEY, 'unlist', 'machine', String(spareMachine))).out).toContain(
      `all offers for machine ${spareMachine} removed`,
    );
    expect(await raw<unknown[]>(renterKey, 'search', 'offers', `machine_id=${spareMachine}`)).toEqual([]);
    const [shown] = await raw<{ listed: boolean }[]>(ADMIN_KEY, 'show', 'machine', String(spareMachine));
    expect(shown!.listed).toBe(false);
  });
});
