import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { type ContextRuntime, Database } from '@rigmarket/event-sourcing';
import { RecordingMailer } from '@rigmarket/identity-2fa';
import { INSTANCE_RUNTIME, SimulatedHostDriver } from '@rigmarket/instance-lifecycle';
import { MARKETPLACE_RUNTIME } from '@rigmarket/marketplace-api';
import { InProcessTransport } from '@rigmarket/messaging';
import { eventually, settledRebuildMismatches } from '@rigmarket/testing';
import request from 'supertest';
import { createEmbeddedApp } from './platform';
import { LIST_MACHINE_ASK } from './testing/fixtures';
import { listVerifiedMachine } from './testing/listed-machine';
import { grantCredit, verifiedUser } from './testing/users';
import { runVastai } from './testing/vastai-cli';

const ADMIN_KEY = 'cli-host-machines-admin-key';

interface ShownInstance {
  id: number;
  machine_id: number;
  num_gpus: number;
  label: string | null;
  actual_status: string | null;
  intended_status: string;
  status_msg: string | null;
}

/**
 * The real `vastai` CLI's host machine operations on the embedded platform (simulated host): set defjob
 * (preempted by a renter's rental, started again when the renter leaves), remove defjob, reports, cleanup machine, defrag machines and delete
 * machine, each checked with a follow-up command, and another user's 404 on each. The host is the admin;
 * the CLI exits 0 on HTTP errors, so output is asserted. The tests run in order on one machine.
 */
describe('the vastai CLI: host machine operations', () => {
  let app: INestApplication;
  let db: Database;
  let port: number;
  let machineId: number;
  let renterKey: string;
  let rented: number;
  let failed: number;
  const mailer = new RecordingMailer();
  const home = mkdtempSync(join(tmpdir(), 'vast-host-home-'));
  const http = () => request(app.getHttpServer());
  const admin = { Authorization: `Bearer ${ADMIN_KEY}` };

  const vastai = (key: string, ...args: string[]) =>
    runVastai({ url: `http://127.0.0.1:${port}`, home, key }, args);
  const host = (...args: string[]) => vastai(ADMIN_KEY, ...args);
  const renter = (...args: string[]) => vastai(renterKey, ...args);
  const instancesOf = async (key: string) =>
    JSON.parse((await vastai(key, 'show', 'instances', '--raw')).stdout) as ShownInstance[];
  const instanceOf = async (key: string, id: number) => (await instancesOf(key)).find((row) => row.id === id);
  const offersOn = async (filter = '') =>
    JSON.parse(
      (await renter('search', 'offers', `machine_id=${machineId} ${filter}`.trim(), '--raw')).stdout,
    ) as { id: number; num_gpus: number }[];
  const rent = async (gpus: number) => {
    const created = await renter(
      'create',
      'instance',
      String(machineId * 1000 + gpus),
      '--image',
      'busybox',
      '--disk',
      '10',
      '--raw',
    );
    const answer = JSON.parse(created.stdout) as { success: boolean; new_contract: number };
    expect(answer.success).toBe(true);
    return answer.new_contract;
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
    machineId = await listVerifiedMachine(app.getHttpServer(), ADMIN_KEY);
    renterKey = await verifiedUser(app.getHttpServer(), mailer, 'host-ops-renter');
    await grantCredit(app.getHttpServer(), ADMIN_KEY, ADMIN_KEY);
    await grantCredit(app.getHttpServer(), ADMIN_KEY, renterKey);
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("vastai set defjob: the host's job runs on the idle GPUs, which stay offered; a renter's rental preempts it, and it starts again once they are idle", async () => {
    const other = await renter('set', 'defjob', String(machineId), '--image', 'busybox');
    expect(other.out).toContain('Failed with error 404');

    // instance-lifecycle learns of the machine over the transport
    const set = await eventually(
      async () => {
        const r = await host(
          'set',
          'defjob',
          String(machineId),
          '--price_gpu',
          '0.1',
          '--price_inetu',
          '0.01',
          '--price_inetd',
          '0.01',
          '--image',
          'busybox',
          '--args',
          'sleep',
          'infinity',
        );
        return r.out.includes('bids created') ? r : undefined;
      },
      30_000,
      'the machine in instance-lifecycle',
    );
    expect(set.out).toContain(`bids created for machine ${machineId}`);
    const job = await eventually(
      async () => {
        const row = (await instancesOf(ADMIN_KEY)).find((r) => r.machine_id === machineId);
        return row?.actual_status === 'running' ? row : undefined;
      },
      30_000,
      'the default job running',
    );
    expect(job).toMatchObject({ label: 'default job', num_gpus: 4, intended_status: 'running' });
    // its GPUs are idle as far as renters are concerned
    expect((await offersOn()).map((o) => o.num_gpus)).toEqual(expect.arrayContaining([1, 2, 4]));

    rented = await rent(2);
    const preempted = await eventually(
      async () => {
        const row = await instanceOf(ADMIN_KEY, job.id);
        return row?.actual_status === 'stopped' ? row : undefined;
      },
      30_000,
      'the default job stopped',
    );
    expect(preempted.intended_status).toBe('stopped');
    expect(preempted.status_msg).toMatch(/outbid/i);
    await eventually(
      async () => ((await instanceOf(renterKey, rented))?.actual_status === 'running' ? true : undefined),
      30_000,
      "the renter's instance running",
    );
    // the rest of the machine is still for rent
    expect((await offersOn()).map((o) => o.num_gpus)).toEqual([1, 2]);

    // the renter leaves: the GPUs are idle again and the same job instance starts again
    expect((await renter('destroy', 'instance', String(rented), '-y')).out).not.toContain(
      'Failed with error',
    );
    const restarted = await eventually(
      async () => {
        const row = await instanceOf(ADMIN_KEY, job.id);
        return row?.actual_status === 'running' ? row : undefined;
      },
      30_000,
      'the default job running again',
    );
    expect(restarted).toMatchObject({ intended_status: 'running', num_gpus: 4 });
    expect((await offersOn()).map((o) => o.num_gpus)).toEqual([1, 2, 4]);
  }, 180_000);

  it('vastai remove defjob: the job and its instance are gone; another user gets 404', async () => {
    const job = (await instancesOf(ADMIN_KEY)).find((r) => r.label === 'default job');
    expect(job).toBeDefined();
    expect((await renter('remove', 'defjob', String(machineId))).out).toContain('Failed with error 404');
    expect((await host('remove', 'defjob', String(machineId))).out).toContain(
      `default instance for machine ${machineId} removed.`,
    );
    expect((await instancesOf(ADMIN_KEY)).map((r) => r.id)).not.toContain(job!.id);
    // removing it again changes nothing
    expect((await host('remove', 'defjob', String(machineId))).out).toContain('removed.');
  }, 120_000);

  it("vastai reports: instances that failed on the machine, newest first; another user's 404", async () => {
    rented = await rent(2);
    failed = await rent(1);
    await eventually(
      async () => ((await instanceOf(renterKey, failed))?.actual_status === 'running' ? true : undefined),
      30_000,
      'running',
    );
    app.get(SimulatedHostDriver, { strict: false }).fail(failed, 'exited', 'container exited with code 137');
    const shown = await eventually(
      async () => {
        const r = await host('reports', String(machineId));
        return r.out.includes('exited') ? r : undefined;
      },
      30_000,
      'the report',
    );
    const answer = JSON.parse(shown.stdout.replace(/^reports: /, '')) as {
      reports: { problem: string; message: string; instance_id: number; created: number }[];
    };
    expect(answer.reports).toEqual([
      {
        problem: 'exited',
        message: 'container exited with code 137',
        instance_id: failed,
        created: expect.any(Number),
      },
    ]);
    expect((await renter('reports', String(machineId))).out).toContain('Failed with error 404');
  }, 120_000);

  it('vastai cleanup machine: once the contract ended, removes the instances that no longer run; another user gets 404', async () => {
    const cleanup = async () =>
      JSON.parse((await host('cleanup', 'machine', String(machineId))).stdout) as {
        success: boolean;
        instances_removed: number[];
        disk_freed_gb: number;
      };
    // the listing runs until 2100: nothing has expired
    expect(await cleanup()).toMatchObject({ success: true, instances_removed: [], disk_freed_gb: 0 });
    expect((await renter('cleanup', 'machine', String(machineId))).out).toContain('Failed with error 404');

    await http()
      .put('/api/v0/machines/create_asks/')
      .set(admin)
      .send({ machine: machineId, end_date: Math.floor(Date.now() / 1000) - 60 })
      .expect(200);
    const removed = await eventually(
      async () => {
        const answer = await cleanup();
        return answer.instances_removed.length > 0 ? answer : undefined;
      },
      30_000,
      'the ended contract in instance-lifecycle',
    );
    // the exited instance goes; the running one stays
    expect(removed).toMatchObject({ instances_removed: [failed], disk_freed_gb: 10 });
    const left = (await instancesOf(renterKey)).map((r) => r.id);
    expect(left).toContain(rented);
    expect(left).not.toContain(failed);
    await http()
      .put('/api/v0/machines/create_asks/')
      .set(admin)
      .send({ machine: machineId, end_date: LIST_MACHINE_ASK.end_date })
      .expect(200);
  }, 120_000);

  it("vastai defrag machines: each of the host's machines with its free GPUs in the largest offers", async () => {
    const shown = await eventually(
      async () => {
        const r = await host('defrag', 'machines', String(machineId), '999999');
        return r.out.includes("'gpus_free': 2") ? r : undefined;
      },
      30_000,
      'the cleanup in the offers',
    );
    expect(shown.out).toContain('defragment result:');
    expect(shown.out).toContain(`'machine_id': ${machineId}`);
    expect(shown.out).toContain("'offers': [2, 1]");
    expect(shown.out).not.toContain('999999');
    const other = await renter('defrag', 'machines', String(machineId));
    expect(other.out).toContain("'machines': []");
  }, 60_000);

  it("vastai delete machine: refused while a renter's instance is on it; then it leaves search and the host's list", async () => {
    expect((await renter('delete', 'machine', String(machineId))).out).toContain('Failed with error 404');
    const refused = await host('delete', 'machine', String(machineId));
    expect(refused.out).toContain('Failed with error 409');
    expect((await offersOn()).length).toBeGreaterThan(0);

    await renter('destroy', 'instance', String(rented), '-y');
    const deleted = await eventually(
      async () => {
        const r = await host('delete', 'machine', String(machineId));
        return r.out.includes('deleted machine_id') ? r : undefined;
      },
      30_000,
      'the instance gone from the allocations',
    );
    expect(deleted.out).toContain(`deleted machine_id (${machineId}) and all related contracts.`);
    expect(await offersOn()).toEqual([]);
    const { machines } = JSON.parse((await host('show', 'machines', '--raw')).stdout) as {
      machines: { id: number }[];
    };
    expect(machines.map((m) => m.id)).not.toContain(machineId);
    // renting it is refused once instance-lifecycle knows
    await eventually(
      async () =>
        (await renter('create', 'instance', String(machineId * 1000 + 1), '--image', 'busybox')).out.includes(
          'Failed with error 404',
        ) || undefined,
      30_000,
      'the deletion in instance-lifecycle',
    );
  }, 120_000);

  it('records every change as events, and the read models rebuild equal to the live ones', async () => {
    const streamTypes = async (token: symbol | string, streamId: string) => {
      const runtime = app.get<ContextRuntime>(token);
      const events = await runtime.db.transaction((sql) => runtime.store.readStream(sql, streamId));
      return events.map((e) => e.type);
    };
    // deleted after an unlist, so every read model that follows listings drops its offers
    expect((await streamTypes(MARKETPLACE_RUNTIME, `machine-${machineId}`)).slice(-2)).toEqual([
      'MachineUnlisted',
      'MachineDeleted',
    ]);
    expect(await streamTypes(INSTANCE_RUNTIME, `defjob-${machineId}`)).toEqual([
      'DefaultJobSet',
      'DefaultJobRemoved',
    ]);
    for (const token of [MARKETPLACE_RUNTIME, INSTANCE_RUNTIME])
      expect(await settledRebuildMismatches(app.get<ContextRuntime>(token))).toEqual([]);
  }, 120_000);
});
