import type { INestApplication } from '@nestjs/common';
import { RecordingMailer } from '@rigmarket/identity-2fa';
import { ed25519PublicKeyLine, eventually } from '@rigmarket/testing';
import request from 'supertest';
import { HOST_HARDWARE, LIST_MACHINE_ASK } from './testing/fixtures';
import { grantCredit, verifiedUser } from './testing/users';
import { type EmbeddedTestApp, startEmbeddedTestApp } from './testing/embedded-test-app';

const ADMIN_KEY = 'authorization-matrix-admin-key';

/** One account's objects, each addressed by a route below. */
interface Owned {
  userId: number;
  instanceId: number;
  machineId: number;
  apiKeyId: number;
  roleId: number;
  roleName: string;
  sshKeyId: number;
  instanceSshKeyId: number;
  webhookId: number;
  deliveryId: number;
  volumeId: number;
  templateId: number;
  connectionId: number;
  scheduledJobId: number;
}

interface Probe {
  /** The owner's object in each path parameter. */
  params: (o: Owned) => Record<string, string | number>;
  /** A body the owner could send: the refusal must come from ownership, not from validation. */
  body?: (o: Owned) => object;
  /** What a stranger may get (default: 403 or 404). */
  refused?: number[];
  /** Routes whose clients expect 200 and an empty answer for an object that is not theirs: that answer. */
  empty?: (body: unknown) => boolean;
}

type Entry = Probe | { exempt: string };

/** A scheduled daily reboot of an instance, as `vastai reboot instance ID --schedule DAILY --hour 3` stores it. */
const rebootJob = (instanceId: number) => ({
  api_endpoint: `/api/v0/instances/reboot/${instanceId}/`,
  request_method: 'PUT',
  request_body: { instance_id: instanceId },
  frequency: 'DAILY',
  day_of_the_week: null,
  hour_of_the_day: 3,
  end_time: Math.floor(Date.now() / 1000) + 7 * 86_400,
  instance_id: instanceId,
});

/**
 * Every route of the OpenAPI document that addresses an object by a path parameter, and how a stranger is
 * refused it. A route added without a row here fails the first test: each new route must say who may reach
 * what it addresses.
 */
const MATRIX: Record<string, Entry> = {
  // `vastai show instance` reads `{"instances": null}` for an id it cannot see (docs/client-compat.md)
  'GET /api/v0/instances/{id}': {
    params: (o) => ({ id: o.instanceId }),
    empty: (body) => (body as { instances?: unknown }).instances === null,
  },
  'PUT /api/v0/instances/{id}': { params: (o) => ({ id: o.instanceId }), body: () => ({ label: 'stolen' }) },
  'DELETE /api/v0/instances/{id}': { params: (o) => ({ id: o.instanceId }) },
  'GET /api/v0/instances/{id}/history': { params: (o) => ({ id: o.instanceId }) },
  'GET /api/v0/instances/{id}/logs/stream': { params: (o) => ({ id: o.instanceId }) },
  'PUT /api/v0/instances/bid_price/{id}': {
    params: (o) => ({ id: o.instanceId }),
    body: () => ({ client_id: 'me', price: 0.9 }),
    // the owner's instance is on demand: its answer is 400 not_a_bid, a stranger's must not say so
  },
  'PUT /api/v0/instances/reboot/{id}': { params: (o) => ({ id: o.instanceId }) },
  'PUT /api/v0/instances/recycle/{id}': { params: (o) => ({ id: o.instanceId }) },
  'PUT /api/v0/instances/update_template/{id}': {
    params: (o) => ({ id: o.instanceId }),
    body: () => ({ image: 'alpine', env: { STOLEN: '1' } }),
  },
  'PUT /api/v0/instances/request_logs/{id}': {
    params: (o) => ({ id: o.instanceId }),
    body: () => ({ tail: '10' }),
  },
  'PUT /api/v0/instances/command/{id}': {
    params: (o) => ({ id: o.instanceId }),
    body: () => ({ command: 'ls /' }),
  },
  'POST /api/v0/instances/take_snapshot/{id}': {
    params: (o) => ({ id: o.instanceId }),
    body: () => ({ container_registry: '127.0.0.1:5000', personal_repo: 'stranger/snap:v1', pause: 'true' }),
  },
  'POST /api/v0/instances/{id}/ssh': {
    params: (o) => ({ id: o.instanceId }),
    body: () => ({ ssh_key: ed25519PublicKeyLine('stranger@attach') }),
  },
  'DELETE /api/v0/instances/{id}/ssh/{keyId}': {
    params: (o) => ({ id: o.instanceId, keyId: o.instanceSshKeyId }),
  },
  'PUT /api/v0/asks/{offerId}': {
    exempt: 'offers are public: renting any listed offer is what a renter does',
  },
  'POST /api/v0/asks/{offerId}': {
    exempt: 'offers are public: renting any listed offer is what a renter does',
  },
  'GET /logs/{file}': {
    exempt:
      'a log file name is an unguessable capability answered by request_logs to the owner only (checked above)',
  },

  // `vastai show machine` prints a bare list: the caller's machines with that id
  'GET /api/v0/machines/{id}': {
    params: (o) => ({ id: o.machineId }),
    empty: (body) => Array.isArray(body) && body.length === 0,
  },
  'GET /api/v0/machines/{id}/history': { params: (o) => ({ id: o.machineId }) },
  'DELETE /api/v0/machines/{id}/asks': { params: (o) => ({ id: o.machineId }) },
  'PUT /api/v0/machines/{id}/minbid': { params: (o) => ({ id: o.machineId }), body: () => ({ price: 0.01 }) },
  'PUT /api/v0/machines/{id}/dnotify': {
    params: (o) => ({ id: o.machineId }),
    body: () => ({ sdate: Date.now() / 1000 + 3600, duration: 1, maintenance_category: 'disk' }),
  },
  'PUT /api/v0/machines/{id}/cancel_maint': { params: (o) => ({ id: o.machineId }) },
  'POST /api/v0/machines/{id}/heartbeat': { params: (o) => ({ id: o.machineId }) },
  'POST /api/v0/machines/{id}/force_delete': { params: (o) => ({ id: o.machineId }) },
  'DELETE /api/v0/machines/{id}/defjob': { params: (o) => ({ id: o.machineId }) },
  'PUT /api/v0/machines/{id}/cleanup': { params: (o) => ({ id: o.machineId }) },
  'GET /api/v0/machines/{id}/reports': { params: (o) => ({ id: o.machineId }) },
  'PUT /api/v0/machines/{id}/verification': {
    params: (o) => ({ id: o.machineId }),
    body: () => ({ verification: 'deverified' }),
    refused: [403],
  },
  'GET /api/v0/volumes/{id}/history': { params: (o) => ({ id: o.volumeId }) },
  'GET /api/v0/template/{id}/history': { params: (o) => ({ id: o.templateId }) },

  'GET /api/v0/auth/apikeys/{id}': { params: (o) => ({ id: o.apiKeyId }) },
  'DELETE /api/v0/auth/apikeys/{id}': { params: (o) => ({ id: o.apiKeyId }) },
  'GET /api/v0/auth/apikeys/{id}/history': { params: (o) => ({ id: o.apiKeyId }) },
  'PUT /api/v0/ssh/{id}': {
    params: (o) => ({ id: o.sshKeyId }),
    body: () => ({ ssh_key: ed25519PublicKeyLine('stranger@replace') }),
  },
  'DELETE /api/v0/ssh/{id}': { params: (o) => ({ id: o.sshKeyId }) },
  'GET /api/v0/team/roles/{name}': { params: (o) => ({ name: o.roleName }) },
  'DELETE /api/v0/team/roles/{name}': { params: (o) => ({ name: o.roleName }) },
  'PUT /api/v0/team/roles/{id}': {
    params: (o) => ({ id: o.roleId }),
    body: () => ({ name: 'stolen', permissions: { api: { misc: {} } } }),
  },
  'DELETE /api/v0/team/members/{id}': { params: (o) => ({ id: o.userId }), refused: [400, 403, 404] },
  'PUT /api/v0/admin/users/{id}/legacy-2fa': {
    params: (o) => ({ id: o.userId }),
    body: () => ({ enabled: true }),
    refused: [403],
  },
  'DELETE /api/v0/users/cloud_integrations/{id}': { params: (o) => ({ id: o.connectionId }) },
  // the renter's backups only; the owner's running instance has none yet, which a stranger must not learn either
  'GET /api/v0/instance_backups/{contractId}/download': { params: (o) => ({ contractId: o.instanceId }) },
  // no API key opens a backup's object: only a download token of that backup (the stranger's key is refused)
  'GET /api/v0/instance_backups/files/{backupId}/{name}': {
    params: () => ({ backupId: 1, name: 'upper.tar' }),
  },
  'PUT /api/v0/instances/prepay/{id}': { params: (o) => ({ id: o.instanceId }), body: () => ({ amount: 1 }) },
  'GET /api/v0/instances/balance/{id}': { params: (o) => ({ id: o.instanceId }) },
  'PUT /api/v0/commands/schedule_job/{id}': {
    params: (o) => ({ id: o.scheduledJobId }),
    body: (o) => rebootJob(o.instanceId),
  },
  'DELETE /api/v0/commands/schedule_job/{id}': { params: (o) => ({ id: o.scheduledJobId }) },
  'GET /api/v0/webhooks/{id}': { params: (o) => ({ id: o.webhookId }) },
  'PUT /api/v0/webhooks/{id}': { params: (o) => ({ id: o.webhookId }), body: () => ({ enabled: false }) },
  'DELETE /api/v0/webhooks/{id}': { params: (o) => ({ id: o.webhookId }) },
  'POST /api/v0/webhooks/{id}/rotate_secret': { params: (o) => ({ id: o.webhookId }) },
  'GET /api/v0/webhooks/{id}/deliveries': { params: (o) => ({ id: o.webhookId }) },
  'GET /api/v0/webhooks/{id}/deliveries/{deliveryId}': {
    params: (o) => ({ id: o.webhookId, deliveryId: o.deliveryId }),
  },
  'POST /api/v0/webhooks/{id}/deliveries/{deliveryId}/redeliver': {
    params: (o) => ({ id: o.webhookId, deliveryId: o.deliveryId }),
  },
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** For the owner's set-up calls: any 2xx, else the answer in the failure. */
const succeeded = (res: request.Response) => {
  if (res.status >= 300) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
};

/**
 * The authorization matrix (issue 14, and the rule that one user never sees another's objects): an owner makes
 * one of every kind of object; a stranger with a full-access key sends every id-addressed route of the OpenAPI
 * document at them and is refused each time; afterwards the owner finds every object as it was.
 */
describe('the authorization matrix: a stranger reaches none of the owner’s objects', () => {
  let app: INestApplication;
  let platform: EmbeddedTestApp | undefined;
  const mailer = new RecordingMailer();
  let ownerKey: string;
  let strangerKey: string;
  let owned: Owned;
  let document: { paths: Record<string, Record<string, unknown>> };
  const http = () => request(app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });

  beforeAll(async () => {
    platform = await startEmbeddedTestApp({
      identity: { adminKey: ADMIN_KEY, mailer, webhooks: { allowPrivateTargets: true, pollMs: 100 } },
      marketplace: { billingIntervalMs: 0 },
    });
    app = platform.app;
    ownerKey = await verifiedUser(app.getHttpServer(), mailer, 'matrix-owner', [
      '/api/v0/instances/',
      '/api/v0/webhooks/',
    ]);
    strangerKey = await verifiedUser(app.getHttpServer(), mailer, 'matrix-stranger', [
      '/api/v0/instances/',
      '/api/v0/webhooks/',
    ]);
    await grantCredit(app.getHttpServer(), ADMIN_KEY, ownerKey);
    const owner = as(ownerKey);
    const userId = (await http().get('/api/v0/users/current/').set(owner).expect(succeeded)).body
      .id as number;

    const webhook = await http()
      .post('/api/v0/webhooks/')
      .set(owner)
      .send({ url: 'http://127.0.0.1:9/hook', event_types: ['instance.state_changed'] })
      .expect(succeeded);
    const machineId = (
      await http()
        .post('/api/v0/machines/')
        .set(owner)
        .send({ ...HOST_HARDWARE, hostname: 'matrix-rig' })
        .expect(succeeded)
    ).body.machine_id as number;
    await http()
      .put('/api/v0/machines/create_asks/')
      .set(owner)
      .send({ machine: machineId, ...LIST_MACHINE_ASK })
      .expect(succeeded);
    const instanceId = (
      await eventually(
        async () => {
          const res = await http()
            .put(`/api/v0/asks/${machineId * 1000 + 1}/`)
            .set(owner)
            .send({ image: 'busybox', disk: 10, runtype: 'ssh' });
          return res.status === 200 ? res : undefined;
        },
        60_000,
        'the offer in instance-lifecycle',
      )
    ).body.new_contract as number;
    const instanceSshKeyId = (
      await http()
        .post(`/api/v0/instances/${instanceId}/ssh/`)
        .set(owner)
        .send({ ssh_key: ed25519PublicKeyLine('owner@attach') })
        .expect(succeeded)
    ).body.key.id as number;
    const apiKeyId = (
      await http().post('/api/v0/auth/apikeys/').set(owner).send({ name: 'matrix' }).expect(succeeded)
    ).body.id as number;
    const role = await http()
      .post('/api/v0/team/roles/')
      .set(owner)
      .send({ name: 'matrix-ops', permissions: { api: { instance_read: {}, misc: {} } } })
      .expect(succeeded);
    const sshKeyId = (
      await http()
        .post('/api/v0/ssh/')
        .set(owner)
        .send({ ssh_key: ed25519PublicKeyLine('owner@laptop') })
        .expect(succeeded)
    ).body.key.id as number;
    await http()
      .post('/api/v0/volumes/')
      .set(owner)
      .send({ size: 100, machine: machineId, price_disk: 0.2, end_date: 4102444800.0 })
      .expect(succeeded);
    const volumeId = (
      await eventually(
        async () => {
          const res = await http()
            .put('/api/v0/volumes/')
            .set(owner)
            .send({ size: 10, id: machineId, name: 'mine' });
          return res.status === 200 ? res : undefined;
        },
        30_000,
        'the volume offer',
      )
    ).body.volume_id as number;
    const templateId = (
      await http()
        .post('/api/v0/template/')
        .set(owner)
        .send({ name: 'matrix', image: 'busybox' })
        .expect(succeeded)
    ).body.template.id as number;
    const connection = await http().post('/api/v0/users/cloud_integrations/').set(owner).send({
      name: 'matrix-s3',
      cloud_type: 's3',
      endpoint: 'http://127.0.0.1:9000',
      access_key_id: 'AKIAMATRIX',
      secret_access_key: 'matrix-secret-key',
    });
    expect(connection.status).toBeLessThan(300);
    const scheduledJobId = (
      await http()
        .post('/api/v0/commands/schedule_job/')
        .set(owner)
        .send(rebootJob(instanceId))
        .expect(succeeded)
    ).body.scheduled_job_id as number;
    const deliveryId = await eventually(
      async () => {
        const res = await http().get(`/api/v0/webhooks/${webhook.body.endpoint.id}/deliveries/`).set(owner);
        return (res.body.deliveries as { id: number }[] | undefined)?.[0]?.id;
      },
      30_000,
      'a webhook delivery',
    );
    owned = {
      userId,
      instanceId,
      machineId,
      apiKeyId,
      roleId: role.body.id as number,
      roleName: 'matrix-ops',
      sshKeyId,
      instanceSshKeyId,
      webhookId: webhook.body.endpoint.id as number,
      deliveryId,
      volumeId,
      templateId,
      connectionId: (connection.body.id ?? connection.body.connection?.id) as number,
      scheduledJobId,
    };
    document = (await http().get('/api/v0/openapi.json').expect(succeeded)).body;
  }, 180_000);
  afterAll(async () => {
    await platform?.close();
  });

  const idRoutes = () =>
    Object.entries(document.paths).flatMap(([path, operations]) =>
      /\{/.test(path)
        ? METHODS.filter((m) => operations[m] !== undefined).map((m) => `${m.toUpperCase()} ${path}`)
        : [],
    );

  it('has a row for every route that addresses an object by its path, and none for a route that is gone', () => {
    const routes = idRoutes();
    expect(routes.filter((route) => !(route in MATRIX))).toEqual([]);
    expect(Object.keys(MATRIX).filter((route) => !routes.includes(route))).toEqual([]);
  });

  it('refuses the stranger every one of them with 403 or 404, never 2xx or 5xx', async () => {
    const answers: string[] = [];
    const wrong: string[] = [];
    for (const [route, entry] of Object.entries(MATRIX)) {
      if ('exempt' in entry) continue;
      const [method, template] = route.split(' ') as [string, string];
      const params = entry.params(owned);
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => String(params[name]));
      const verb = method.toLowerCase() as 'get' | 'put' | 'post' | 'delete';
      const client = http();
      const res = await client[verb](`${path}/`)
        .set(as(strangerKey))
        .send(entry.body?.(owned) ?? {})
        // the log stream answers an event stream to its owner: never wait for one here
        .timeout(5_000)
        .catch((error: { response?: request.Response }) => error.response);
      const status = res?.status ?? 0;
      answers.push(`${route} -> ${status}`);
      const hidden = status === 200 && entry.empty?.(res?.body) === true;
      if (!hidden && !(entry.refused ?? [403, 404]).includes(status))
        wrong.push(`${route} -> ${status} ${JSON.stringify(res?.body).slice(0, 200)}`);
    }
    expect(wrong).toEqual([]);
    expect(answers.length).toBeGreaterThan(30);
  });

  it('leaves every object of the owner as it was', async () => {
    const owner = as(ownerKey);
    const instance = (await http().get(`/api/v0/instances/${owned.instanceId}/`).set(owner).expect(200)).body
      .instances;
    expect(instance).toMatchObject({ id: owned.instanceId, intended_status: 'running' });
    expect(instance.label).not.toBe('stolen');
    expect(instance.image_uuid).toBe('busybox');
    const [machine] = (await http().get(`/api/v0/machines/${owned.machineId}/`).set(owner).expect(200))
      .body as { listed: boolean; min_bid_price: number; verification: string }[];
    expect(machine).toMatchObject({ listed: true, min_bid_price: LIST_MACHINE_ASK.price_min_bid });
    expect(machine!.verification).not.toBe('deverified');
    await http().get(`/api/v0/auth/apikeys/${owned.apiKeyId}/`).set(owner).expect(200);
    expect((await http().get(`/api/v0/team/roles/${owned.roleName}/`).set(owner).expect(200)).body.name).toBe(
      owned.roleName,
    );
    const keys = (await http().get('/api/v0/ssh/').set(owner).expect(200)).body.ssh_keys as { id: number }[];
    expect(keys.map((k) => k.id)).toContain(owned.sshKeyId);
    expect(
      (await http().get(`/api/v0/webhooks/${owned.webhookId}/`).set(owner).expect(200)).body.endpoint,
    ).toMatchObject({ enabled: true });
    const volumes = (await http().get('/api/v0/volumes?owner=me').set(owner).expect(200)).body.volumes as {
      id: number;
    }[];
    expect(volumes.map((v) => v.id)).toContain(owned.volumeId);
    const connections = (await http().get('/api/v0/users/cloud_integrations/').set(owner).expect(200))
      .body as {
      id: number;
    }[];
    expect(connections.map((c) => c.id)).toContain(owned.connectionId);
    const jobs = (await http().get('/api/v0/commands/schedule_job/').set(owner).expect(200)).body as {
      id: number;
      api_endpoint: string;
    }[];
    expect(jobs).toEqual([
      expect.objectContaining({
        id: owned.scheduledJobId,
        api_endpoint: rebootJob(owned.instanceId).api_endpoint,
      }),
    ]);
  });
});
