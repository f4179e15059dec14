import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { IDENTITY_RUNTIME, IdentityModule, RecordingMailer } from '@rigmarket/identity-2fa';
import {
  INSTANCE_RUNTIME,
  InstanceLifecycleModule,
  ProvisioningRecovery,
  SimulatedHostDriver,
  provisioningStreamId,
  recordInterruptedRent,
} from '@rigmarket/instance-lifecycle';
import { MARKETPLACE_RUNTIME, MarketplaceModule } from '@rigmarket/marketplace-api';
import {
  BOTH_MODES,
  type HarnessMode,
  type PlatformHarness,
  VASTAI_CREATE_INSTANCE,
  ed25519PublicKeyLine,
  eventually,
  rebuildMismatches,
  startPlatform,
  uniqueName,
} from '@rigmarket/testing';
import request from 'supertest';
import { rentOnceListed } from './testing/listed-machine';
import { simulatedHostKeys } from './testing/simulated-host-keys';
import { adminInMarketplace, grantCredit, verifiedUser } from './testing/users';
import { LIST_MACHINE_ASK as ASK, HOST_HARDWARE as HARDWARE } from './testing/fixtures';

/**
 * instance-lifecycle over HTTP with identity (keys) and marketplace (machines, offers, templates): the
 * marketplace's events reach instance-lifecycle over the transport; hosts are simulated with short timings.
 */
const ADMIN_KEY = 'admin-instance-key-0123456789';

interface Harness extends PlatformHarness {
  mailer: RecordingMailer;
}

async function start(mode: HarnessMode): Promise<Harness> {
  const mailer = new RecordingMailer();
  const platform = await startPlatform(mode, [
    IdentityModule.forRoot({ adminKey: ADMIN_KEY, mailer }),
    // Renters here have test credit; the billing meter is off (billing.e2e-spec.ts bills), so no run stops an instance mid-test.
    MarketplaceModule.forRoot({ billingIntervalMs: 0 }),
    InstanceLifecycleModule.forRoot({ simulatedHost: { pullMs: 30, bootMs: 120, stopMs: 50 } }),
  ]);
  return { ...platform, mailer };
}

const CLI_CREATE = VASTAI_CREATE_INSTANCE;

/** The CLI's `show instances --raw` query (docs/client-compat.md 2.3). */
const V1_QUERY = `select_filters=${encodeURIComponent('{}')}&order_by=${encodeURIComponent('[{"col": "id", "dir": "asc"}]')}&limit=25`;

interface Row {
  id: number;
  actual_status: string | null;
  intended_status: string;
  label: string | null;
  [key: string]: unknown;
}

describe.each(BOTH_MODES)('instances over HTTP, %s', (mode, harnessMode) => {
  let h: Harness;
  const http = () => request(h.app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });
  let renterKey: string;
  let otherKey: string;
  let machineId: number;

  const user = () => verifiedUser(h.app.getHttpServer(), h.mailer);

  /** The first accept after a machine change waits for the machine and its listing to reach instance-lifecycle. */
  function accept(offerId: number, body: object, key = renterKey) {
    return rentOnceListed(
      () => http().put(`/api/v0/asks/${offerId}/`).set(as(key)).send(body),
      `offer ${offerId} listed in instance-lifecycle`,
    );
  }

  const show = async (id: number, key = renterKey): Promise<Row | null> =>
    (await http().get(`/api/v0/instances/${id}/?owner=me`).set(as(key)).expect(200)).body.instances;
  const until = (id: number, status: string) =>
    eventually(
      async () => {
        const row = await show(id);
        return row?.actual_status === status ? row : undefined;
      },
      30_000,
      `instance ${id} ${status}`,
    );

  beforeAll(async () => {
    h = await start(harnessMode);
    await eventually(
      async () =>
        (await http().get('/api/v0/machines').set(as(ADMIN_KEY))).status === 200 ? true : undefined,
      60_000,
      'the admin key in marketplace',
    );
    await adminInMarketplace(h.app.getHttpServer(), ADMIN_KEY);
    renterKey = await user();
    otherKey = await user();
    await grantCredit(h.app.getHttpServer(), ADMIN_KEY, renterKey);
    await grantCredit(h.app.getHttpServer(), ADMIN_KEY, otherKey);
    const reg = await http().post('/api/v0/machines/').set(as(ADMIN_KEY)).send(HARDWARE).expect(201);
    machineId = reg.body.machine_id;
    await http()
      .put('/api/v0/machines/create_asks/')
      .set(as(ADMIN_KEY))
      .send({ machine: machineId, ...ASK })
      .expect(200);
    await http()
      .put(`/api/v0/machines/${machineId}/verification/`)
      .set(as(ADMIN_KEY))
      .send({ verification: 'verified' })
      .expect(200);
    // Rentable in instance-lifecycle once its ask arrived: a bid below the min bid is refused after the listing check.
    await eventually(
      async () =>
        (
          await http()
            .put(`/api/v0/asks/${machineId * 1000 + 1}/`)
            .set(as(renterKey))
            .send({ image: 'x', price: 0.01 })
        ).status === 400
          ? true
          : undefined,
      60_000,
      'the listed machine in instance-lifecycle',
    );
  }, 180_000);
  afterAll(async () => {
    await h?.close();
  });

  it('rents a searched offer, reads it at once, and polls it to running with an SSH endpoint', async () => {
    const search = await http()
      .post('/api/v0/bundles/')
      .set(as(renterKey))
      .send({ machine_id: { eq: machineId }, num_gpus: { eq: 4 } })
      .expect(200);
    const offer = search.body.offers[0] as { id: number };
    const created = await accept(offer.id, CLI_CREATE);
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      success: true,
      new_contract: expect.any(Number),
      instance_api_key: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const id = created.body.new_contract as number;

    // read-your-writes: never a 404 right after creation
    const first = await show(id);
    expect(first).toMatchObject({
      id,
      intended_status: 'running',
      label: 'mylabel',
      image: 'pytorch/pytorch',
      machine_id: machineId,
      num_gpus: 4,
      gpu_name: 'RTX 4090',
      disk_space: 40,
    });
    expect([null, 'loading', 'running']).toContain(first?.actual_status);

    const running = await until(id, 'running');
    expect(running).toMatchObject({
      cur_state: 'running',
      ssh_host: '203.0.113.7',
      ssh_port: expect.any(Number),
      public_ipaddr: '203.0.113.7',
      start_date: expect.any(Number),
      extra_env: expect.arrayContaining([
        ['TZ', 'UTC'],
        ['A', 'b=c'],
      ]),
      image_runtype: 'ssh_direct',
      actions: ['stop', 'label', 'destroy'],
      status_msg: expect.any(String),
    });
    expect((running.ports as Record<string, { HostPort: string }[]>)['22/tcp']?.[0]?.HostPort).toBe(
      String(running.ssh_port),
    );
    expect((running.ports as Record<string, unknown>)['8080/tcp']).toBeDefined();
    expect(running.dph_total).toBeCloseTo(4 * 0.5 + (0.15 * 40) / 720);

    // the marketplace hears of it: the machine has no free GPUs left to offer
    await eventually(
      async () => {
        const after = await http()
          .post('/api/v0/bundles/')
          .set(as(renterKey))
          .send({ machine_id: { eq: machineId } })
          .expect(200);
        return after.body.offers.length === 0 ? true : undefined;
      },
      60_000,
      'the offers gone from search',
    );

    // the same GPUs cannot be rented twice; another renter sees none of it
    const taken = await http()
      .put(`/api/v0/asks/${offer.id}/`)
      .set(as(otherKey))
      .send({ image: 'busybox' })
      .expect(409);
    expect(taken.body).toMatchObject({
      success: false,
      error: 'offer_unavailable',
      msg: expect.stringContaining('no longer available'),
    });
    expect(await show(id, otherKey)).toBeNull();
    await http().put(`/api/v0/instances/${id}/`).set(as(otherKey)).send({ state: 'stopped' }).expect(404);
    await http().delete(`/api/v0/instances/${id}/`).set(as(otherKey)).send({}).expect(404);
    expect(
      (await http().get(`/api/v1/instances/?${V1_QUERY}`).set(as(otherKey)).expect(200)).body,
    ).toMatchObject({ instances: [], total_instances: 0 });

    // stop, start, label
    await http().put(`/api/v0/instances/${id}/`).set(as(renterKey)).send({ state: 'stopped' }).expect(200);
    expect(await show(id)).toMatchObject({ intended_status: 'stopped' });
    const stopped = await until(id, 'stopped');
    expect(stopped).toMatchObject({
      cur_state: 'stopped',
      actions: ['start', 'label', 'destroy'],
      billing: { compute: false, storage: true },
    });
    await http().put(`/api/v0/instances/${id}/`).set(as(renterKey)).send({ state: 'running' }).expect(200);
    await until(id, 'running');
    await http().put(`/api/v0/instances/${id}/`).set(as(renterKey)).send({ label: 'my label_x' }).expect(200);
    expect(await show(id)).toMatchObject({ label: 'my label_x' });

    // lists: v1 (current clients) and v0 ?owner=me (older ones)
    const v1 = await http().get(`/api/v1/instances/?${V1_QUERY}`).set(as(renterKey)).expect(200);
    expect(v1.body).toMatchObject({
      next_token: null,
      total_instances: 1,
      label_counts: { 'my label_x': 1 },
    });
    expect(v1.body.instances.map((r: Row) => r.id)).toEqual([id]);
    const filtered = await http()
      .get(`/api/v1/instances/?select_filters=${encodeURIComponent('{"actual_status":{"in":["stopped"]}}')}`)
      .set(as(renterKey))
      .expect(200);
    expect(filtered.body.instances).toEqual([]);
    const v0 = await http().get('/api/v0/instances?owner=me').set(as(renterKey)).expect(200);
    expect(v0.body).toMatchObject({ instances_found: 1, instances: [expect.objectContaining({ id })] });

    // destroy: gone, idempotent, and the GPUs are free again
    await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).send({}).expect(200);
    expect(await show(id)).toBeNull();
    await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).send({}).expect(200);
    await eventually(
      async () => {
        const after = await http()
          .post('/api/v0/bundles/')
          .set(as(renterKey))
          .send({ machine_id: { eq: machineId } })
          .expect(200);
        return after.body.offers.some((o: { id: number }) => o.id === offer.id) ? true : undefined;
      },
      60_000,
      'the offer back in search',
    );
    const again = await http()
      .put(`/api/v0/asks/${offer.id}/`)
      .set(as(otherKey))
      .send({ image: 'busybox' })
      .expect(200);
    await http()
      .delete(`/api/v0/instances/${again.body.new_contract}/`)
      .set(as(otherKey))
      .send({})
      .expect(200);
  });

  it('lets the instance key start, stop and destroy its own instance only', async () => {
    const a = await accept(machineId * 1000 + 1, { image: 'busybox' });
    const b = await accept(machineId * 1000 + 1, { image: 'busybox', target_state: 'stopped' });
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    const key = a.body.instance_api_key as string;
    const idA = a.body.new_contract as number;
    const idB = b.body.new_contract as number;
    await until(idB, 'stopped');
    await http().put(`/api/v0/instances/${idA}/`).set(as(key)).send({ state: 'stopped' }).expect(200);
    await http().put(`/api/v0/instances/${idA}/`).set(as(key)).send({ label: 'nope' }).expect(403);
    await http().put(`/api/v0/instances/${idB}/`).set(as(key)).send({ state: 'running' }).expect(403);
    await http().delete(`/api/v0/instances/${idB}/`).set(as(key)).send({}).expect(403);
    const list = await http().get('/api/v0/instances/').set(as(key)).expect(403);
    expect(list.body).toMatchObject({
      success: false,
      error: 'forbidden',
      msg: expect.stringContaining('instance API key'),
    });
    await http()
      .put(`/api/v0/asks/${machineId * 1000 + 1}/`)
      .set(as(key))
      .send({ image: 'busybox' })
      .expect(403);
    // Off instance-lifecycle too: every context knows the key (its hash is in InstanceCreated) and refuses
    // it with 403, not the 401 a client would read as an expired session.
    for (const path of ['/api/v0/users/current/', '/api/v0/template/', '/api/v0/machines/maintenances/']) {
      const refused = await eventually(
        async () => {
          const res = await http().get(path).set(as(key));
          return res.status === 401 ? undefined : res;
        },
        15_000,
        `${path} to know the instance key`,
      );
      expect([path, refused.status, refused.body]).toEqual([
        path,
        403,
        { success: false, error: 'forbidden', msg: expect.stringContaining('instance API key') },
      ]);
    }
    await http().delete(`/api/v0/instances/${idA}/`).set(as(key)).send({}).expect(200);
    // a destroyed instance's key opens nothing
    await http().delete(`/api/v0/instances/${idA}/`).set(as(key)).send({}).expect(401);

    // bulk start, bulk destroy (the CLI repeats it)
    const bulk = await http()
      .put('/api/v0/instances/')
      .set(as(renterKey))
      .send({ state: 'running', ids: [idB] })
      .expect(200);
    expect(bulk.body).toMatchObject({ success: true });
    await until(idB, 'running');
    for (let i = 0; i < 2; i += 1) {
      const res = await http()
        .delete('/api/v0/instances/')
        .set(as(renterKey))
        .send({ instance_ids: [idB] })
        .expect(200);
      expect(res.body).toMatchObject({ success: true });
    }
    expect(await show(idB)).toBeNull();
  });

  it('reboots and recycles; a crashed container is exited for good, with a status_msg saying what to do', async () => {
    const created = await accept(machineId * 1000 + 1, {
      image: 'busybox',
      runtype: 'jupyter_direc ssh_direc ssh_proxy',
    });
    expect(created.status).toBe(200);
    const id = created.body.new_contract as number;
    const running = await until(id, 'running');
    expect(running.image_runtype).toBe('jupyter_direct');
    expect(Object.keys(running.ports as object).sort()).toEqual(['22/tcp', '8080/tcp']);
    await http().put(`/api/v0/instances/reboot/${id}/`).set(as(renterKey)).send({}).expect(200);
    await until(id, 'running');
    await http().put(`/api/v0/instances/recycle/${id}/`).set(as(renterKey)).send({}).expect(200);
    await until(id, 'running');
    await http().put(`/api/v0/instances/reboot/${id}/`).set(as(otherKey)).send({}).expect(404);

    h.app.get(SimulatedHostDriver, { strict: false }).fail(id, 'exited');
    const exited = await until(id, 'exited');
    expect(exited).toMatchObject({
      actions: ['label', 'destroy'],
      status_msg: expect.stringContaining('Destroy the instance'),
      ssh_host: null,
    });
    const start = await http()
      .put(`/api/v0/instances/${id}/`)
      .set(as(renterKey))
      .send({ state: 'running' })
      .expect(400);
    expect(start.body).toMatchObject({ success: false, error: 'instance_cannot_start' });
    await http().put(`/api/v0/instances/reboot/${id}/`).set(as(renterKey)).send({}).expect(400);
    await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).send({}).expect(200);
  });

  it('attaches and detaches SSH keys as the CLI sends them; the host holds the list; bad keys and other accounts are refused', async () => {
    const created = await accept(machineId * 1000 + 1, { image: 'busybox', runtype: 'ssh' });
    expect(created.status).toBe(200);
    const id = created.body.new_contract as number;
    await until(id, 'running');
    const hostKeys = (expected: string[]) => simulatedHostKeys(h.app, id, expected);
    const alice = ed25519PublicKeyLine('alice@laptop');
    const bob = ed25519PublicKeyLine('bob@desk');

    const first = await http()
      .post(`/api/v0/instances/${id}/ssh/`)
      .set(as(renterKey))
      .send({ ssh_key: `${alice}\n` })
      .expect(200);
    expect(first.body).toEqual({
      success: true,
      msg: `SSH key 1 attached to instance ${id}`,
      key: { id: 1, instance_id: id, ssh_key: alice },
    });
    await hostKeys([alice]);
    // The same key again is the same attachment.
    const again = await http()
      .post(`/api/v0/instances/${id}/ssh/`)
      .set(as(renterKey))
      .send({ ssh_key: alice });
    expect(again.body.key).toMatchObject({ id: 1 });
    const second = await http()
      .post(`/api/v0/instances/${id}/ssh/`)
      .set(as(renterKey))
      .send({ ssh_key: bob })
      .expect(200);
    expect(second.body.key).toMatchObject({ id: 2 });
    await hostKeys([alice, bob]);

    for (const ssh_key of [
      undefined,
      42,
      'ssh-ed25519 not-base64!',
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbg==',
    ]) {
      const bad = await http().post(`/api/v0/instances/${id}/ssh/`).set(as(renterKey)).send({ ssh_key });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ success: false, error: 'invalid_ssh_key', msg: expect.any(String) });
    }
    const foreign = await http()
      .post(`/api/v0/instances/${id}/ssh/`)
      .set(as(otherKey))
      .send({ ssh_key: bob });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ success: false, error: 'no_such_instance' });
    await http().delete(`/api/v0/instances/${id}/ssh/1/`).set(as(otherKey)).expect(404);
    const unknown = await http().delete(`/api/v0/instances/${id}/ssh/9/`).set(as(renterKey)).expect(404);
    expect(unknown.body).toMatchObject({ success: false, error: 'ssh_key_not_found' });
    const badId = await http().delete(`/api/v0/instances/${id}/ssh/x/`).set(as(renterKey)).expect(400);
    expect(badId.body).toMatchObject({ success: false, error: 'bad_request' });

    const detached = await http().delete(`/api/v0/instances/${id}/ssh/1/`).set(as(renterKey)).expect(200);
    expect(detached.body).toEqual({ success: true, msg: `SSH key 1 detached from instance ${id}` });
    await hostKeys([bob]);
    // A recycled container keeps its instance's keys (a real host writes them into the fresh container).
    await http().put(`/api/v0/instances/recycle/${id}/`).set(as(renterKey)).send({}).expect(200);
    await until(id, 'running');
    await hostKeys([bob]);
    await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).send({}).expect(200);
    await http().post(`/api/v0/instances/${id}/ssh/`).set(as(renterKey)).send({ ssh_key: alice }).expect(404);
  });

  it('advertises no SSH for an args instance (args has no SSH nor Jupyter), and does for ssh', async () => {
    const args = await accept(machineId * 1000 + 1, {
      image: 'busybox',
      runtype: 'args',
      args_str: 'sleep 1',
    });
    expect(args.status).toBe(200);
    const argsId = args.body.new_contract as number;
    expect(await until(argsId, 'running')).toMatchObject({
      image_runtype: 'args',
      ssh_host: null,
      ssh_port: null,
      label: '', // never labelled: the spec's string type, empty
    });
    const ssh = await accept(machineId * 1000 + 1, { image: 'busybox', runtype: 'ssh' });
    const sshId = ssh.body.new_contract as number;
    expect(await until(sshId, 'running')).toMatchObject({
      ssh_host: expect.any(String),
      ssh_port: expect.any(Number),
    });
    for (const id of [argsId, sshId])
      await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).send({}).expect(200);
  });

  it('uploads logs with tail and filter to a result_url served without auth', async () => {
    const created = await accept(machineId * 1000 + 1, {
      image: 'busybox',
      onstart: 'echo hello',
      runtype: 'ssh',
    });
    const id = created.body.new_contract as number;
    await until(id, 'running');
    const fetchLogs = async (body: object) => {
      const res = await http()
        .put(`/api/v0/instances/request_logs/${id}/`)
        .set(as(renterKey))
        .send(body)
        .expect(200);
      expect(res.body).toMatchObject({
        success: true,
        result_url: expect.stringMatching(/^http:\/\/.+\/logs\/[0-9a-f]{32}\.log$/),
        msg: expect.any(String),
      });
      const text = await http().get(new URL(res.body.result_url).pathname).expect(200);
      expect(text.headers['content-type']).toContain('text/plain');
      return text.text;
    };
    const all = await fetchLogs({ tail: '100' });
    expect(all).toContain('onstart: echo hello');
    expect(all).toContain('sshd');
    expect(await fetchLogs({ tail: 1 })).toBe('container ready\n');
    expect(await fetchLogs({ filter: 'sshd' })).toBe('Starting OpenBSD Secure Shell server: sshd.\n');
    expect(await fetchLogs({ daemon_logs: 'true' })).toContain('[rigmarket-daemon] instance');
    const denied = await http()
      .put(`/api/v0/instances/request_logs/${id}/`)
      .set(as(otherKey))
      .send({})
      .expect(403);
    expect(denied.body).toMatchObject({
      success: false,
      error: 'not_authorized',
      msg: 'not authorized to view logs for this instance',
    });
    expect(
      (await http().put('/api/v0/instances/request_logs/987654/').set(as(renterKey)).send({}).expect(404))
        .body,
    ).toMatchObject({ error: 'invalid_id', msg: 'invalid instance id' });
    await http().get('/logs/00000000000000000000000000000000.log').expect(404);
    await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).send({}).expect(200);
  });

  it('creates from a template, merged per the precedence table', async () => {
    const template = await http()
      .post('/api/v0/template/')
      .set(as(renterKey))
      .send({
        name: 't',
        image: 'vastai/base',
        tag: 'cuda-12',
        env: '-e A=template -e B=2',
        runtype: 'ssh',
        ssh_direct: true,
        recommended_disk_space: 30,
        onstart: 'from template',
      })
      .expect(200);
    const hashId = template.body.template.hash_id as string;
    const created = await eventually(
      async () => {
        const res = await http()
          .put(`/api/v0/asks/${machineId * 1000 + 1}/`)
          .set(as(renterKey))
          .send({ image: null, env: { A: 'request' }, template_hash_id: hashId });
        return res.status === 404 ? undefined : res;
      },
      60_000,
      'the template in instance-lifecycle',
    );
    expect(created.status).toBe(200);
    const row = await show(created.body.new_contract);
    expect(row).toMatchObject({
      image: 'vastai/base:cuda-12',
      image_runtype: 'ssh_direct',
      disk_space: 30,
      onstart: 'from template',
      template_hash_id: hashId,
    });
    expect(row?.extra_env).toEqual(
      expect.arrayContaining([
        ['A', 'request'],
        ['B', '2'],
      ]),
    );
    expect(row?.extra_env).toHaveLength(2);
    await http()
      .delete(`/api/v0/instances/${created.body.new_contract}/`)
      .set(as(renterKey))
      .send({})
      .expect(200);
  });

  it('counts the instances created from a template across its edits, and searches templates by that count', async () => {
    const created = await http()
      .post('/api/v0/template/')
      .set(as(renterKey))
      .send({ name: uniqueName('counted'), image: 'vastai/base', runtype: 'ssh' })
      .expect(200);
    const templateId = created.body.template.id as number;
    expect(created.body.template).toMatchObject({ count_created: 0, recent_create_date: null });
    /** Rents with a template hash once instance-lifecycle knows it (its market_templates projection). */
    const rent = (hashId: string) =>
      eventually(
        async () => {
          const res = await http()
            .put(`/api/v0/asks/${machineId * 1000 + 1}/`)
            .set(as(renterKey))
            .send({ image: null, template_hash_id: hashId });
          return res.status === 404 ? undefined : res;
        },
        60_000,
        `template ${hashId} in instance-lifecycle`,
      );
    const rented: number[] = [];
    for (let i = 0; i < 2; i++) rented.push((await rent(created.body.template.hash_id)).body.new_contract);
    const edited = await http()
      .put('/api/v0/template/')
      .set(as(renterKey))
      .send({ hash_id: created.body.template.hash_id, desc: 'edited' })
      .expect(200);
    expect(edited.body.template.hash_id).not.toBe(created.body.template.hash_id);
    const startedAt = Date.now() / 1000;
    rented.push((await rent(edited.body.template.hash_id)).body.new_contract);
    expect(rented.every((id) => typeof id === 'number')).toBe(true);
    // Destroying an instance does not uncount its creation.
    for (const id of rented)
      await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).send({}).expect(200);

    const search = (filters: object) =>
      http()
        .get('/api/v0/template/')
        .query({ select_filters: JSON.stringify({ id: { eq: templateId }, ...filters }) })
        .set(as(renterKey))
        .expect(200);
    const counted = await eventually(
      async () => {
        const found = (await search({ count_created: { gte: '3' } })).body.templates as Array<
          Record<string, unknown>
        >;
        return found.length === 1 ? found[0] : undefined;
      },
      60_000,
      'count_created 3 in marketplace',
    );
    expect(counted).toMatchObject({
      id: templateId,
      hash_id: edited.body.template.hash_id,
      count_created: 3,
    });
    expect(counted!.recent_create_date).toBeGreaterThanOrEqual(startedAt - 5);
    expect(counted!.recent_create_date).toBeLessThanOrEqual(Date.now() / 1000 + 5);
    expect(
      (await search({ count_created: { eq: 3 }, recent_create_date: { gt: startedAt - 60 } })).body.templates,
    ).toHaveLength(1);
    expect((await search({ count_created: { gt: 3 } })).body.templates).toEqual([]);
    expect((await search({ count_created: { lt: '3' } })).body.templates).toEqual([]);
    // the template's own view (an edit answers it) shows the same usage
    const viewed = await http()
      .put('/api/v0/template/')
      .set(as(renterKey))
      .send({ hash_id: edited.body.template.hash_id, desc: 'again' })
      .expect(200);
    expect(viewed.body.template).toMatchObject({
      count_created: 3,
      recent_create_date: counted!.recent_create_date,
    });
  });

  it('returns the first answer for a retried create with the same Idempotency-Key', async () => {
    const offer = machineId * 1000 + 1;
    const key = uniqueName('idem');
    const first = await accept(offer, { image: 'busybox', label: 'idem' });
    expect(first.status).toBe(200);
    await http()
      .delete(`/api/v0/instances/${first.body.new_contract}/`)
      .set(as(renterKey))
      .send({})
      .expect(200);
    const [a, b] = await Promise.all([
      http()
        .put(`/api/v0/asks/${offer}/`)
        .set(as(renterKey))
        .set('Idempotency-Key', key)
        .send({ image: 'busybox', label: 'idem' }),
      http()
        .put(`/api/v0/asks/${offer}/`)
        .set(as(renterKey))
        .set('Idempotency-Key', key)
        .send({ image: 'busybox', label: 'idem' }),
    ]);
    expect(a.status).toBe(200);
    expect(b.body).toEqual(a.body);
    const retried = await http()
      .put(`/api/v0/asks/${offer}/`)
      .set(as(renterKey))
      .set('Idempotency-Key', key)
      .send({ image: 'busybox', label: 'idem' })
      .expect(200);
    expect(retried.body).toEqual(a.body);
    const other = await http()
      .put(`/api/v0/asks/${offer}/`)
      .set(as(renterKey))
      .set('Idempotency-Key', key)
      .send({ image: 'busybox', label: 'different' })
      .expect(422);
    expect(other.body).toMatchObject({ success: false, error: 'idempotency_key_reused' });
    const v1 = await http()
      .get(`/api/v1/instances/?select_filters=${encodeURIComponent('{"label":{"eq":"idem"}}')}`)
      .set(as(renterKey))
      .expect(200);
    expect(v1.body.total_instances).toBe(1);
    await http().delete(`/api/v0/instances/${a.body.new_contract}/`).set(as(renterKey)).send({}).expect(200);
  });

  it('answers bad requests, unknown offers and missing keys with the Error object', async () => {
    const offer = machineId * 1000 + 1;
    const envString = await http()
      .put(`/api/v0/asks/${offer}/`)
      .set(as(renterKey))
      .send({ image: 'x', env: '-e TZ=UTC' })
      .expect(400);
    expect(envString.body).toMatchObject({
      success: false,
      error: 'bad_request',
      msg: expect.stringContaining('env must be an object'),
    });
    expect(
      (await http().put(`/api/v0/asks/${offer}/`).set(as(renterKey)).send({ template_id: 5 }).expect(400))
        .body.msg,
    ).toContain('template_hash_id');
    expect(
      (await http().put(`/api/v0/asks/${offer}/`).set(as(renterKey)).send({ env: {} }).expect(400)).body.msg,
    ).toContain('image is required');
    expect(
      (
        await http()
          .put(`/api/v0/asks/${offer}/`)
          .set(as(renterKey))
          .send({ image: 'x', onstart: 'x'.repeat(4049) })
          .expect(400)
      ).body.msg,
    ).toContain('4048');
    expect(
      (
        await http()
          .put(`/api/v0/asks/${offer}/`)
          .set(as(renterKey))
          .send({ image: 'x', price: 0.01 })
          .expect(400)
      ).body.msg,
    ).toContain('minimum bid');
    expect(
      (await http().put('/api/v0/asks/999999001/').set(as(renterKey)).send({ image: 'x' }).expect(404)).body,
    ).toMatchObject({ error: 'no_such_offer' });
    expect(
      (await http().put(`/api/v0/instances/1/`).set(as(renterKey)).send({ state: 'paused' }).expect(400)).body
        .msg,
    ).toContain('state must be running or stopped');
    await http().put(`/api/v0/asks/${offer}/`).send({ image: 'x' }).expect(401);
    await http().get('/api/v1/instances/').set(as('not-a-key')).expect(401);
    expect((await http().get('/api/v0/instances/424242/').set(as(renterKey)).expect(200)).body).toEqual({
      instances: null,
    });
    await http().get('/api/v1/instances/?limit=26').set(as(renterKey)).expect(400);

    // a key without instance permissions
    const scoped = await http()
      .post('/api/v0/auth/apikeys/')
      .set(as(renterKey))
      .send({ name: 'ro', permissions: { api: { instance_read: {} } } })
      .expect(201);
    const readOnly = scoped.body.key as string;
    await eventually(
      async () =>
        (await http().get('/api/v1/instances/').set(as(readOnly))).status === 200 ? true : undefined,
      60_000,
      'the scoped key',
    );
    const refused = await http()
      .put(`/api/v0/asks/${offer}/`)
      .set(as(readOnly))
      .send({ image: 'x' })
      .expect(403);
    expect(refused.body).toMatchObject({
      success: false,
      error: 'forbidden',
      msg: expect.stringContaining('instance_write'),
    });
  });

  it('lets a higher bid or an on-demand rental outbid an interruptible instance; bid_price raises it back', async () => {
    const reg = await http()
      .post('/api/v0/machines/')
      .set(as(ADMIN_KEY))
      .send({ ...HARDWARE, hostname: 'bid-rig', num_gpus: 2 })
      .expect(201);
    const bidMachine = reg.body.machine_id as number;
    await http()
      .put('/api/v0/machines/create_asks/')
      .set(as(ADMIN_KEY))
      .send({ machine: bidMachine, ...ASK })
      .expect(200);
    const offer = bidMachine * 1000 + 2;
    await eventually(
      async () =>
        (await http().put(`/api/v0/asks/${offer}/`).set(as(renterKey)).send({ image: 'x', price: 0.01 }))
          .status === 400
          ? true
          : undefined,
      60_000,
      'the bid machine',
    );

    const a = (
      await http()
        .put(`/api/v0/asks/${offer}/`)
        .set(as(renterKey))
        .send({ image: 'busybox', price: 1.0 })
        .expect(200)
    ).body.new_contract as number;
    await until(a, 'running');
    expect(await show(a)).toMatchObject({ is_bid: true, dph_total: 1.0 });
    // a lower bid does not take the GPUs
    await http()
      .put(`/api/v0/asks/${offer}/`)
      .set(as(otherKey))
      .send({ image: 'busybox', price: 0.7 })
      .expect(409);
    const b = (
      await http()
        .put(`/api/v0/asks/${offer}/`)
        .set(as(otherKey))
        .send({ image: 'busybox', price: 1.5 })
        .expect(200)
    ).body.new_contract as number;
    expect(await show(a)).toMatchObject({
      intended_status: 'stopped',
      status_msg: expect.stringContaining('Outbid'),
    });
    expect(await until(a, 'stopped')).toMatchObject({
      status_msg: expect.stringContaining('Outbid'),
      billing: { compute: false, storage: true },
    });
    // starting again needs a bid above the holder's
    expect(
      (await http().put(`/api/v0/instances/${a}/`).set(as(renterKey)).send({ state: 'running' }).expect(409))
        .body.error,
    ).toBe('offer_unavailable');
    await http()
      .put(`/api/v0/instances/bid_price/${a}/`)
      .set(as(renterKey))
      .send({ client_id: 'me', price: 0.1 })
      .expect(400);
    await http()
      .put(`/api/v0/instances/bid_price/${a}/`)
      .set(as(renterKey))
      .send({ client_id: 'me', price: '2.0' })
      .expect(200);
    await http().put(`/api/v0/instances/${a}/`).set(as(renterKey)).send({ state: 'running' }).expect(200);
    await until(a, 'running');
    expect(
      (
        await eventually(
          async () => {
            const row = (await http().get(`/api/v0/instances/${b}/`).set(as(otherKey)).expect(200)).body
              .instances as Row;
            return row.actual_status === 'stopped' ? row : undefined;
          },
          30_000,
          'b outbid',
        )
      ).status_msg,
    ).toContain('Outbid');
    // search shows no free GPUs on the machine while a holds them (b, outbid, holds none)
    await eventually(
      async () => {
        const found = await http()
          .post('/api/v0/bundles/')
          .set(as(renterKey))
          .send({ machine_id: { eq: bidMachine } })
          .expect(200);
        return found.body.offers.length === 0 ? true : undefined;
      },
      60_000,
      'the bid machine full',
    );
    // an on-demand rental outbids any bid
    const c = (
      await http().put(`/api/v0/asks/${offer}/`).set(as(otherKey)).send({ image: 'busybox' }).expect(200)
    ).body.new_contract as number;
    await until(a, 'stopped');
    expect(
      (await http().put(`/api/v0/instances/bid_price/${c}/`).set(as(otherKey)).send({ price: 5 }).expect(400))
        .body.error,
    ).toBe('not_a_bid');
    await http()
      .delete('/api/v0/instances/')
      .set(as(otherKey))
      .send({ instance_ids: [b, c] })
      .expect(200);
    await http().delete(`/api/v0/instances/${a}/`).set(as(renterKey)).send({}).expect(200);
    await eventually(
      async () => {
        const found = await http()
          .post('/api/v0/bundles/')
          .set(as(renterKey))
          .send({ machine_id: { eq: bidMachine } })
          .expect(200);
        return found.body.offers.some((o: { num_gpus: number }) => o.num_gpus === 2) ? true : undefined;
      },
      60_000,
      'the bid machine free again',
    );
  });

  it(`gives exactly one of 50 parallel accepts of one offer the instance (${mode})`, async () => {
    const reg = await http()
      .post('/api/v0/machines/')
      .set(as(ADMIN_KEY))
      .send({ ...HARDWARE, hostname: 'race-rig', num_gpus: 2 })
      .expect(201);
    const raceMachine = reg.body.machine_id as number;
    await http()
      .put('/api/v0/machines/create_asks/')
      .set(as(ADMIN_KEY))
      .send({ machine: raceMachine, ...ASK })
      .expect(200);
    const offer = raceMachine * 1000 + 2;
    // wait until instance-lifecycle knows the machine (a too-low bid is refused only once it does)
    await eventually(
      async () =>
        (await http().put(`/api/v0/asks/${offer}/`).set(as(renterKey)).send({ image: 'x', price: 0.01 }))
          .status === 400
          ? true
          : undefined,
      60_000,
      'the race machine',
    );
    const keys = [renterKey, otherKey];
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        http()
          .put(`/api/v0/asks/${offer}/`)
          .set(as(keys[i % 2]!))
          .send({ image: 'busybox' }),
      ),
    );
    const won = results.filter((r) => r.status === 200);
    const lost = results.filter((r) => r.status !== 200);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(49);
    for (const res of lost) expect(res.body).toMatchObject({ success: false, error: 'offer_unavailable' });
    // The winner is either renter: destroy it, so that later tests see only their own instances.
    const winner = won[0]!;
    await http()
      .delete(`/api/v0/instances/${winner.body.new_contract as number}/`)
      .set(as(keys[results.indexOf(winner) % 2]!))
      .send({})
      .expect(200);
  }, 120_000);

  it('gives up a rent an older release left between its GPU allocation and its instance: the recovery frees the GPUs', async () => {
    const reg = await http()
      .post('/api/v0/machines/')
      .set(as(ADMIN_KEY))
      .send({ ...HARDWARE, hostname: 'crash-rig', num_gpus: 1 })
      .expect(201);
    const crashMachine = reg.body.machine_id as number;
    await http()
      .put('/api/v0/machines/create_asks/')
      .set(as(ADMIN_KEY))
      .send({ machine: crashMachine, ...ASK })
      .expect(200);
    const offer = crashMachine * 1000 + 1;
    await eventually(
      async () =>
        (await http().put(`/api/v0/asks/${offer}/`).set(as(renterKey)).send({ image: 'x', price: 0.01 }))
          .status === 400
          ? true
          : undefined,
      60_000,
      'the crash machine',
    );
    // A rent of an older release that recorded its first step (the request and its GPUs), then its process
    // "died": the GPUs are held, no instance exists. (Rents now record all of it in one transaction.)
    const runtime = h.app.get<ContextRuntime>(INSTANCE_RUNTIME, { strict: false });
    const instanceId = await runtime.nextId('instance_ids');
    const request = { instanceId, renter: 1, machineId: crashMachine, numGpus: 1, machineGpus: 1, bid: null };
    await recordInterruptedRent(runtime, request, { correlationId: 'crash', causationId: 'crash' });
    const refused = await http().put(`/api/v0/asks/${offer}/`).set(as(renterKey)).send({ image: 'busybox' });
    expect(refused.body).toMatchObject({ success: false, error: 'offer_unavailable' });

    const recovery = h.app.get(ProvisioningRecovery, { strict: false });
    const steps = async () =>
      (
        await runtime.db.transaction((sql) => runtime.store.readStream(sql, provisioningStreamId(instanceId)))
      ).map((e) => e.type);
    // A rent with recent progress may still be running in some process: the default sweep leaves it alone.
    await recovery.sweep();
    expect(await steps()).toEqual(['ProvisioningRequested', 'ProvisioningGpusAllocated']);
    expect(await recovery.sweep(0)).toBeGreaterThanOrEqual(1);
    expect(await steps()).toEqual([
      'ProvisioningRequested',
      'ProvisioningGpusAllocated',
      'ProvisioningFailed',
      'ProvisioningGpusReleased',
    ]);
    const rented = await http().put(`/api/v0/asks/${offer}/`).set(as(renterKey)).send({ image: 'busybox' });
    expect(rented.status).toBe(200);
    // Today's rent records its allocation, its instance and its whole workflow in one transaction: it never
    // shows as open, and a crash cannot split it.
    const rentedId = rented.body.new_contract as number;
    const steps2 = await runtime.db.transaction((sql) =>
      runtime.store.readStream(sql, provisioningStreamId(rentedId)),
    );
    expect(steps2.map((e) => e.type)).toEqual([
      'ProvisioningRequested',
      'ProvisioningGpusAllocated',
      'ProvisioningInstanceCreated',
    ]);
    const written = await runtime.db.query<{ stream_id: string; tx: string }>(
      `SELECT stream_id, transaction_id::text AS tx FROM instance_lifecycle.events
        WHERE (stream_id = $1 AND stream_position = 1) OR stream_id = $2
           OR (stream_id = $3 AND data->>'instanceId' = $4)`,
      [
        `instance-${rentedId}`,
        provisioningStreamId(rentedId),
        `allocation-${crashMachine}`,
        String(rentedId),
      ],
    );
    expect(new Set(written.map((r) => r.stream_id.split('-')[0]))).toEqual(
      new Set(['instance', 'provisioning', 'allocation']),
    );
    expect(new Set(written.map((r) => r.tx)).size).toBe(1);
    expect(
      await runtime.db.query(`SELECT 1 FROM instance_lifecycle.open_provisionings WHERE instance_id = $1`, [
        rentedId,
      ]),
    ).toEqual([]);
    await http().delete(`/api/v0/instances/${rentedId}/`).set(as(renterKey)).send({}).expect(200);
    // The destroy releases the GPUs in its own transaction: the offer is whole again at once.
    const ended = await runtime.db.query<{ type: string; tx: string }>(
      `SELECT type, transaction_id::text AS tx FROM instance_lifecycle.events
        WHERE (stream_id = $1 AND type = 'InstanceDestroyed') OR (stream_id = $2 AND type = 'GpusReleased' AND data->>'instanceId' = $3)`,
      [`instance-${rentedId}`, `allocation-${crashMachine}`, String(rentedId)],
    );
    expect(ended.map((r) => r.type).sort()).toEqual(['GpusReleased', 'InstanceDestroyed']);
    expect(new Set(ended.map((r) => r.tx)).size).toBe(1);
    const again = await eventually(
      async () => {
        const r = await http().put(`/api/v0/asks/${offer}/`).set(as(renterKey)).send({ image: 'busybox' });
        return r.status === 200 ? (r.body.new_contract as number) : undefined;
      },
      30_000,
      'the offer rentable again after the destroy',
    );
    await http().delete(`/api/v0/instances/${again}/`).set(as(renterKey)).send({}).expect(200);
  }, 120_000);

  it("lists the filter values of the caller's own instances and filters by machine verification", async () => {
    const created = await accept(machineId * 1000 + 1, { image: 'busybox', disk: 10 });
    const id = created.body.new_contract as number;
    await until(id, 'running');
    const filters = (await http().get('/api/v0/instances/filters/').set(as(renterKey)).expect(200)).body
      .filters;
    expect(filters).toContainEqual({
      actual_status: 'running',
      verification: 'verified',
      gpu_name: 'RTX 4090',
    });
    const others = (await http().get('/api/v0/instances/filters/').set(as(otherKey)).expect(200)).body
      .filters as Array<{ actual_status: string }>;
    expect(others.filter((f) => f.actual_status === 'running')).toEqual([]);
    const page = async (verification: string[]) => {
      const q = `select_filters=${encodeURIComponent(JSON.stringify({ verification: { in: verification } }))}`;
      return (
        (await http().get(`/api/v1/instances/?${q}`).set(as(renterKey)).expect(200)).body.instances as Row[]
      ).map((r) => r.id);
    };
    expect(await page(['verified'])).toContain(id);
    expect(await page(['unverified', 'deverified'])).not.toContain(id);
    expect((await show(id))?.verification).toBe('verified');
    await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).expect(200);
  });

  it('links an existing volume of the renter on the same machine; refuses missing, foreign and other-machine volumes, and vm on container hosts', async () => {
    // The host lists volume space on its machine; the renter creates a volume there (marketplace).
    await http()
      .post('/api/v0/volumes/')
      .set(as(ADMIN_KEY))
      .send({ size: 200, machine: machineId, price_disk: 0.2, end_date: 4102444800.0 })
      .expect(200);
    const volumeId = (
      await http()
        .put('/api/v0/volumes/')
        .set(as(renterKey))
        .send({ size: 20, id: machineId, name: 'data' })
        .expect(200)
    ).body.volume_id as number;
    const offer = machineId * 1000 + 1;
    const withVolume = {
      image: 'busybox',
      disk: 10,
      volume_info: { volume_id: volumeId, mount_path: '/data' },
    };
    const linked = await eventually(
      async () => {
        const res = await http().put(`/api/v0/asks/${offer}/`).set(as(renterKey)).send(withVolume);
        return res.body.error === 'no_such_volume' ? undefined : res;
      },
      60_000,
      'the volume in instance-lifecycle',
    );
    expect(linked.status).toBe(200);
    const id = linked.body.new_contract as number;
    expect(await show(id)).toMatchObject({
      volume_info: { volume_id: volumeId, mount_path: '/data' },
      vm: false,
    });
    await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).expect(200);

    const missing = await http()
      .put(`/api/v0/asks/${offer}/`)
      .set(as(renterKey))
      .send({ ...withVolume, volume_info: { volume_id: 999999, mount_path: '/data' } });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ success: false, error: 'no_such_volume' });
    const foreign = await http().put(`/api/v0/asks/${offer}/`).set(as(otherKey)).send(withVolume);
    expect(foreign.status).toBe(404);
    // (create_new: instance-volumes.e2e-spec.ts)
    const create = await http()
      .put(`/api/v0/asks/${offer}/`)
      .set(as(renterKey))
      .send({
        ...withVolume,
        volume_info: { create_new: true, volume_id: 999999, size: 15, mount_path: '/data' },
      });
    expect(create.status).toBe(404);
    expect(create.body).toMatchObject({ success: false, error: 'no_such_volume_offer' });
    const vm = await http()
      .put(`/api/v0/asks/${offer}/`)
      .set(as(renterKey))
      .send({ image: 'busybox', vm: true });
    expect(vm.status).toBe(400);
    expect(vm.body).toMatchObject({ success: false, error: 'vm_unsupported' });
    // A host that declares vms_enabled takes VM rentals.
    const vmHost = (
      await http()
        .post('/api/v0/machines/')
        .set(as(ADMIN_KEY))
        .send({ ...HARDWARE, hostname: 'rig-vm', vms_enabled: true })
        .expect(201)
    ).body.machine_id as number;
    await http()
      .put('/api/v0/machines/create_asks/')
      .set(as(ADMIN_KEY))
      .send({ machine: vmHost, ...ASK })
      .expect(200);
    // (retried until the machine, its ask and vms_enabled have reached instance-lifecycle)
    const vmRental = await eventually(
      async () => {
        const res = await http()
          .put(`/api/v0/asks/${vmHost * 1000 + 1}/`)
          .set(as(renterKey))
          .send({ image: 'ubuntu', vm: true });
        return res.status === 200 ? res : undefined;
      },
      60_000,
      'the VM host in instance-lifecycle',
    );
    expect(await show(vmRental.body.new_contract as number)).toMatchObject({ vm: true });
    await http()
      .delete(`/api/v0/instances/${vmRental.body.new_contract as number}/`)
      .set(as(renterKey))
      .expect(200);
  });

  it('creates several instances in one bulk request, each on its own, and launches the cheapest matching offer', async () => {
    const bulk = await http()
      .post('/api/v0/asks/bulk/')
      .set(as(renterKey))
      .send({ image: 'busybox', disk: 10, ids: [machineId * 1000 + 1, 999999001, machineId * 1000 + 1] })
      .expect(200);
    expect(bulk.body.success).toBe(false);
    expect(bulk.body.results).toEqual([
      expect.objectContaining({
        ask_id: machineId * 1000 + 1,
        success: true,
        new_contract: expect.any(Number),
      }),
      expect.objectContaining({ ask_id: 999999001, success: false, error: 'no_such_offer' }),
      expect.objectContaining({ ask_id: machineId * 1000 + 1, success: true }),
    ]);
    expect(bulk.body.new_contracts).toHaveLength(2);
    await http().post('/api/v0/asks/bulk/').set(as(renterKey)).send({ image: 'busybox' }).expect(400);

    // What `vastai launch instance -g RTX_4090 -n 1 -i busybox -r North_America` sends.
    const launch = await http()
      .put('/api/v0/launch_instance/')
      .set(as(renterKey))
      .send({
        image: 'busybox',
        disk: 16.0,
        env: {},
        q: {
          gpu_name: { eq: 'RTX 4090' },
          num_gpus: { eq: '1' },
          geolocation: { in: ['US', 'CA'] },
          order: [['score', 'desc']],
          limit: 3,
        },
      })
      .expect(200);
    expect(launch.body).toMatchObject({
      success: true,
      new_contract: expect.any(Number),
      ask_id: expect.any(Number),
    });
    expect((await show(launch.body.new_contract as number))?.gpu_name).toBe('RTX 4090');
    const none = await http()
      .put('/api/v0/launch_instance/')
      .set(as(renterKey))
      .send({ image: 'busybox', q: { gpu_name: { eq: 'H200' }, num_gpus: { eq: '1' } } });
    expect(none.status).toBe(409);
    expect(none.body).toMatchObject({ success: false, error: 'no_offer_available' });

    // The v1 list pages after the last row's sort keys (keyset): one label null, ordered both ways.
    const [first, second] = bulk.body.new_contracts as [number, number];
    const launched = launch.body.new_contract as number;
    await http().put(`/api/v0/instances/${first}/`).set(as(renterKey)).send({ label: 'b' }).expect(200);
    await http().put(`/api/v0/instances/${launched}/`).set(as(renterKey)).send({ label: 'a' }).expect(200);
    const pages = async (dir: 'asc' | 'desc', limit: number) => {
      const seen: number[] = [];
      let token: string | null = null;
      for (let page = 0; page < 5; page += 1) {
        const q = new URLSearchParams({
          select_filters: JSON.stringify({ id: { in: [first, second, launched] } }),
          order_by: JSON.stringify([{ col: 'label', dir }]),
          limit: String(limit),
          ...(token ? { after_token: token } : {}),
        });
        const res = await http().get(`/api/v1/instances/?${q}`).set(as(renterKey)).expect(200);
        expect(res.body.total_instances).toBe(3);
        seen.push(...(res.body.instances as Row[]).map((r) => r.id));
        token = res.body.next_token as string | null;
        if (token === null) return seen;
      }
      throw new Error('the pages never ended');
    };
    // PostgreSQL's order: NULLS LAST ascending, NULLS FIRST descending.
    expect(await pages('asc', 1)).toEqual([launched, first, second]);
    expect(await pages('desc', 1)).toEqual([second, first, launched]);
    expect(await pages('desc', 2)).toEqual([second, first, launched]);
    const forged = Buffer.from(JSON.stringify({ k: ['x'] })).toString('base64url');
    const refused = await http().get(`/api/v1/instances/?after_token=${forged}`).set(as(renterKey));
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ success: false, error: 'bad_request' });

    for (const id of [first, second, launched]) {
      await http().delete(`/api/v0/instances/${id}/`).set(as(renterKey)).expect(200);
    }
  });

  it('rebuilds every read model from the events of all this renting to the same rows', async () => {
    for (const token of [IDENTITY_RUNTIME, MARKETPLACE_RUNTIME, INSTANCE_RUNTIME]) {
      const runtime = h.app.get<ContextRuntime>(token, { strict: false });
      // Retried while the last host reports may still be on their way over the transport.
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
