import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { type ContextRuntime, Database } from '@rigmarket/event-sourcing';
import { createPlatformApp } from '@rigmarket/http-kit';
import { IDENTITY_RUNTIME, IdentityModule, RecordingMailer } from '@rigmarket/identity-2fa';
import { InstanceLifecycleModule } from '@rigmarket/instance-lifecycle';
import { MarketplaceModule } from '@rigmarket/marketplace-api';
import { InProcessTransport } from '@rigmarket/messaging';
import { SyncMaintenanceModule, UnavailableCopyExecutor } from '@rigmarket/sync-maintenance';
import {
  type PlatformHarness,
  eventually,
  settledRebuildMismatches,
  startPlatform,
} from '@rigmarket/testing';
import request from 'supertest';
import type { App } from 'supertest/types';
import { HOST_HARDWARE, LIST_MACHINE_ASK } from './testing/fixtures';
import { grantCredit, verifiedUser } from './testing/users';

/**
 * Signed webhooks on the embedded platform (docs/api.md, Webhooks): a local receiver checks every Standard
 * Webhooks signature with the secret shown at creation; a failing receiver gets its retries, then its
 * endpoint is disabled (and the audit log says so); a delivery pending when the platform stops is delivered
 * after it starts again; a logged delivery is sent again on request; another account sees none of it. And
 * distributed (PostgreSQL, Kafka): events of instance-lifecycle and sync-maintenance reach identity's reactor
 * over Kafka, and a machine's maintenance reaches the renter of an instance on it.
 */
const ADMIN_KEY = 'admin-webhooks-key-0123456789';
const TFA_KEY = 'ab'.repeat(32);

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local webhook receiver: records every request and answers `status` (200 unless told otherwise). */
class Receiver {
  readonly received: Received[] = [];
  status = 200;
  private server!: Server;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        this.received.push({ headers: req.headers, body });
        res.writeHead(this.status, { 'content-type': 'text/plain' });
        res.end(this.status === 200 ? 'ok' : `receiver broken (${this.status})`);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  messages(): Array<{ id: string; type: string; data: Record<string, unknown> }> {
    return this.received.map((r) => ({
      id: String(r.headers['webhook-id']),
      ...(JSON.parse(r.body) as { type: string; data: Record<string, unknown> }),
    }));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * The receiver's check, written from the Standard Webhooks spec with node:crypto (not the library the
 * platform signs with): HMAC-SHA256 over `id.timestamp.body` under the base64 bytes after `whsec_`,
 * compared in constant time with each `v1,` signature, and a timestamp within five minutes.
 */
function verifySignature(secret: string, received: Received): boolean {
  const id = received.headers['webhook-id'];
  const timestamp = received.headers['webhook-timestamp'];
  const signatures = received.headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${received.body}`).digest();
  return signatures.split(' ').some((entry) => {
    const [version, value] = entry.split(',');
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** The admin registers and lists a machine; the renter rents one GPU of it (once instance-lifecycle knows the offer). */
async function rentOnNewMachine(
  server: App,
  renterKey: string,
  hostname: string,
): Promise<{ machineId: number; instanceId: number }> {
  const http = () => request(server);
  const machineId = (
    await http()
      .post('/api/v0/machines/')
      .set({ Authorization: `Bearer ${ADMIN_KEY}` })
      .send({ ...HOST_HARDWARE, hostname })
      .expect(201)
  ).body.machine_id as number;
  await http()
    .put('/api/v0/machines/create_asks/')
    .set({ Authorization: `Bearer ${ADMIN_KEY}` })
    .send({ machine: machineId, ...LIST_MACHINE_ASK })
    .expect(200);
  const created = await eventually(
    async () => {
      const res = await http()
        .put(`/api/v0/asks/${machineId * 1000 + 1}/`)
        .set({ Authorization: `Bearer ${renterKey}` })
        .send({ image: 'busybox', disk: 10, runtype: 'ssh' });
      return res.status === 200 ? res : undefined;
    },
    60_000,
    'the offer in instance-lifecycle',
  );
  return { machineId, instanceId: created.body.new_contract as number };
}

interface Endpoint {
  id: number;
  url: string;
  event_types: string[];
  enabled: boolean;
  disabled_reason: string | null;
  consecutive_failures: number;
}

interface Delivery {
  id: number;
  message_id: string;
  event_type: string;
  status: string;
  attempts: number;
  last_attempt: { status_code: number | null; response_excerpt: string | null } | null;
}

describe('signed webhooks, embedded (PGlite on disk, in-process transport)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rigmarket-webhooks-'));
  const mailer = new RecordingMailer();
  let db: Database;
  let transport: InProcessTransport;
  let app: INestApplication;
  const http = () => request(app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });
  const good = new Receiver();
  const failing = new Receiver();
  const restarting = new Receiver();
  const killed = new Receiver();
  let renterKey: string;
  let otherKey: string;
  let instanceId: number;
  let signed: { endpoint: Endpoint; secret: string };

  async function boot(): Promise<void> {
    db = await Database.connect({ kind: 'pglite', dataDir });
    transport = new InProcessTransport();
    app = await createPlatformApp({
      db,
      transport,
      // The only process on its data folder, as the embedded platform runs: claims found at start are a killed life's.
      soleProcess: true,
      modules: [
        IdentityModule.forRoot({
          adminKey: ADMIN_KEY,
          mailer,
          tfaKey: TFA_KEY,
          // Attempts at 0, ~0.2 s, ~3.2 s and ~6.2 s; an endpoint failing 4 in a row is disabled.
          webhooks: {
            retryScheduleMs: [200, 3000, 3000],
            disableAfterFailures: 4,
            timeoutMs: 2000,
            pollMs: 100,
            allowPrivateTargets: true,
          },
        }),
        MarketplaceModule.forRoot({ billingIntervalMs: 0 }),
        InstanceLifecycleModule.forRoot({ simulatedHost: { pullMs: 20, bootMs: 40, stopMs: 20 } }),
      ],
    });
    await app.init();
  }

  async function shutdown(): Promise<void> {
    await app.close();
    await transport.close();
    await db.close();
  }

  const actual = async (id: number) =>
    (await http().get(`/api/v0/instances/${id}/`).set(as(renterKey)).expect(200)).body.instances
      ?.actual_status as string | undefined;

  const createEndpoint = async (url: string, eventTypes: string[]) =>
    (
      await http()
        .post('/api/v0/webhooks/')
        .set(as(renterKey))
        .send({ url, event_types: eventTypes, description: 'e2e' })
        .expect(200)
    ).body as { endpoint: Endpoint; secret: string };

  const deliveries = async (endpointId: number) =>
    (await http().get(`/api/v0/webhooks/${endpointId}/deliveries/`).set(as(renterKey)).expect(200)).body
      .deliveries as Delivery[];

  const setIntent = async (state: 'running' | 'stopped') => {
    await http().put(`/api/v0/instances/${instanceId}/`).set(as(renterKey)).send({ state }).expect(200);
    await eventually(async () => ((await actual(instanceId)) === state ? true : undefined), 30_000, state);
  };

  /**
   * Given an endpoint on `receiver` (answering 503) for instance state changes, when the instance is set to
   * `state`, its first attempt fails; then the platform stops. The endpoint and its secret.
   */
  const failedOnceThenStopped = async (receiver: Receiver, state: 'running' | 'stopped') => {
    receiver.status = 503;
    const created = await createEndpoint(receiver.url, ['instance.state_changed']);
    await setIntent(state);
    await eventually(
      async () => (receiver.received.length > 0 ? true : undefined),
      20_000,
      'a first, failed attempt',
    );
    await shutdown();
    return created;
  };

  /** Waits until the endpoint's log shows deliveries, every one delivered. */
  const allDelivered = (endpointId: number, timeoutMs: number, what: string) =>
    eventually(
      async () => {
        const log = await deliveries(endpointId);
        return log.length > 0 && log.every((d) => d.status === 'delivered') ? log : undefined;
      },
      timeoutMs,
      what,
    );

  beforeAll(async () => {
    await Promise.all([good.start(), failing.start(), restarting.start(), killed.start()]);
    failing.status = 500;
    await boot();
    renterKey = await verifiedUser(app.getHttpServer(), mailer, 'hooked');
    otherKey = await verifiedUser(app.getHttpServer(), mailer, 'nosy', ['/api/v0/webhooks/']);
    await grantCredit(app.getHttpServer(), ADMIN_KEY, renterKey, 50);
    signed = await createEndpoint(good.url, ['instance.state_changed', 'instance.outbid']);
    ({ instanceId } = await rentOnNewMachine(app.getHttpServer(), renterKey, 'rig-webhooks'));
  }, 120_000);

  afterAll(async () => {
    await shutdown().catch(() => undefined);
    await Promise.all([good.close(), failing.close(), restarting.close(), killed.close()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses endpoints it cannot or must not call', async () => {
    const refused = async (body: Record<string, unknown>) =>
      (await http().post('/api/v0/webhooks/').set(as(renterKey)).send(body).expect(400)).body.error;
    expect(await refused({ url: 'ftp://example.com/hook', event_types: ['credit.low'] })).toBe(
      'invalid_webhook',
    );
    expect(
      await refused({ url: `https://example.com/${'a'.repeat(2100)}`, event_types: ['credit.low'] }),
    ).toBe('invalid_webhook');
    expect(await refused({ url: 'https://user:pw@example.com/', event_types: ['credit.low'] })).toBe(
      'invalid_webhook',
    );
    expect(await refused({ url: 'https://example.com/', event_types: ['instance.exploded'] })).toBe(
      'invalid_webhook',
    );
    expect(await refused({ url: 'https://example.com/', event_types: [] })).toBe('invalid_webhook');
    const catalog = (await http().get('/api/v0/webhooks/event_types/').set(as(renterKey)).expect(200)).body;
    expect(catalog.event_types.map((t: { name: string }) => t.name)).toEqual([
      'instance.state_changed',
      'instance.outbid',
      'credit.low',
      'credit.exhausted',
      'sync.completed',
      'sync.failed',
      'maintenance.scheduled',
    ]);
  });

  it('delivers instance state changes signed with the secret shown once', async () => {
    expect(signed.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const listed = (await http().get('/api/v0/webhooks/').set(as(renterKey)).expect(200)).body;
    expect(listed.endpoints).toEqual([expect.objectContaining({ id: signed.endpoint.id, enabled: true })]);
    expect(JSON.stringify(listed)).not.toContain(signed.secret.slice(6));

    await eventually(
      async () =>
        good.messages().some((m) => m.type === 'instance.state_changed' && m.data.actual_status === 'running')
          ? true
          : undefined,
      30_000,
      'the running state at the receiver',
    );
    expect(good.received.length).toBeGreaterThan(0);
    for (const received of good.received) {
      expect(verifySignature(signed.secret, received)).toBe(true);
      // Another secret, or a body changed on the way, does not verify.
      expect(verifySignature(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, received)).toBe(false);
      expect(verifySignature(signed.secret, { ...received, body: received.body.replace('}', ' }') })).toBe(
        false,
      );
    }
    const running = good.messages().find((m) => m.data.actual_status === 'running')!;
    expect(running.id).toMatch(/^msg_/);
    expect(running.data.instance_id).toBe(instanceId);

    const log = await eventually(
      async () => {
        const found = await deliveries(signed.endpoint.id);
        return found.some((d) => d.message_id === running.id && d.status === 'delivered') ? found : undefined;
      },
      10_000,
      'the delivery logged',
    );
    const entry = log.find((d) => d.message_id === running.id)!;
    expect(entry).toMatchObject({ event_type: 'instance.state_changed', attempts: 1 });
    expect(entry.last_attempt).toMatchObject({ status_code: 200, response_excerpt: 'ok' });
  });

  it('sends a logged delivery again on request, with the same webhook-id', async () => {
    const [latest] = await deliveries(signed.endpoint.id);
    const before = good.received.filter((r) => r.headers['webhook-id'] === latest!.message_id).length;
    const res = await http()
      .post(`/api/v0/webhooks/${signed.endpoint.id}/deliveries/${latest!.id}/redeliver/`)
      .set(as(renterKey))
      .expect(200);
    expect(res.body.delivery).toMatchObject({ id: latest!.id, message_id: latest!.message_id });
    await eventually(
      async () =>
        good.received.filter((r) => r.headers['webhook-id'] === latest!.message_id).length > before
          ? true
          : undefined,
      10_000,
      'the redelivery at the receiver',
    );
    const detail = await eventually(
      async () => {
        const d = (
          await http()
            .get(`/api/v0/webhooks/${signed.endpoint.id}/deliveries/${latest!.id}/`)
            .set(as(renterKey))
            .expect(200)
        ).body.delivery;
        return d.attempt_log.length === 2 && d.status === 'delivered' ? d : undefined;
      },
      10_000,
      'the second attempt logged',
    );
    expect(detail.attempt_log.map((a: { manual: boolean }) => a.manual)).toEqual([false, true]);
    expect(detail.payload).toMatchObject({ type: latest!.event_type, data: { instance_id: instanceId } });
    for (const received of good.received) expect(verifySignature(signed.secret, received)).toBe(true);
  });

  it('shows another account none of the endpoint, its log or its redelivery', async () => {
    const id = signed.endpoint.id;
    const [latest] = await deliveries(id);
    expect((await http().get('/api/v0/webhooks/').set(as(otherKey)).expect(200)).body.endpoints).toEqual([]);
    for (const call of [
      http().get(`/api/v0/webhooks/${id}/`),
      http().get(`/api/v0/webhooks/${id}/deliveries/`),
      http().get(`/api/v0/webhooks/${id}/deliveries/${latest!.id}/`),
      http().post(`/api/v0/webhooks/${id}/deliveries/${latest!.id}/redeliver/`),
      http().put(`/api/v0/webhooks/${id}/`).send({ enabled: false }),
      http().post(`/api/v0/webhooks/${id}/rotate_secret/`),
      http().delete(`/api/v0/webhooks/${id}/`),
    ]) {
      const res = await call.set(as(otherKey));
      expect({ status: res.status, error: res.body.error }).toEqual({
        status: 404,
        error: 'webhook_endpoint_not_found',
      });
    }
    expect(
      (await http().get(`/api/v0/webhooks/${id}/`).set(as(renterKey)).expect(200)).body.endpoint,
    ).toMatchObject({ enabled: true });
  });

  it('retries a failing receiver, then disables its endpoint and records why', async () => {
    const { endpoint } = await createEndpoint(failing.url, ['instance.state_changed']);
    await setIntent('stopped');
    const disabled = await eventually(
      async () => {
        const found = (await http().get(`/api/v0/webhooks/${endpoint.id}/`).set(as(renterKey)).expect(200))
          .body.endpoint as Endpoint;
        return found.enabled ? undefined : found;
      },
      20_000,
      'the failing endpoint disabled',
    );
    expect(disabled).toMatchObject({ disabled_reason: 'failing', consecutive_failures: 4 });
    const log = await deliveries(endpoint.id);
    expect(log.length).toBeGreaterThan(0);
    expect(log.reduce((n, d) => n + d.attempts, 0)).toBe(4);
    expect(log[0]!.last_attempt).toMatchObject({
      status_code: 500,
      response_excerpt: 'receiver broken (500)',
    });
    // Retried: one message was attempted more than once, each time with the same id.
    const ids = failing.received.map((r) => String(r.headers['webhook-id']));
    expect(new Set(ids).size).toBeLessThan(ids.length);
    const audit = (await http().get('/api/v0/audit_logs/').set(as(renterKey)).expect(200)).body as Array<{
      action: string;
      object: string;
      args: Record<string, unknown>;
    }>;
    expect(audit).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          action: 'WebhookEndpointDisabled',
          object: `webhook-${endpoint.id}`,
          args: expect.objectContaining({ reason: 'failing', consecutiveFailures: 4 }),
        }),
      ]),
    );
    // Nothing more is sent to a disabled endpoint.
    const sent = failing.received.length;
    await new Promise((r) => setTimeout(r, 500));
    expect(failing.received.length).toBe(sent);
  });

  it('delivers after a restart what was pending when the platform stopped', async () => {
    const { endpoint, secret } = await failedOnceThenStopped(restarting, 'running');
    const pending = restarting.messages().map((m) => m.id);
    restarting.status = 200;
    const failedBefore = restarting.received.length;

    await boot();
    await allDelivered(endpoint.id, 20_000, 'every delivery delivered after the restart');
    const after = restarting.received.slice(failedBefore);
    expect(after.length).toBeGreaterThan(0);
    expect(after.map((r) => String(r.headers['webhook-id']))).toEqual(expect.arrayContaining(pending));
    for (const received of restarting.received) expect(verifySignature(secret, received)).toBe(true);
  });

  it('sends at once after a restart a delivery whose claim a killed life left', async () => {
    const { endpoint } = await failedOnceThenStopped(killed, 'stopped');
    // Given a life killed in the middle of an attempt: its claim holds the delivery for the attempt's timeout
    // (2 s) + 30 s.
    const left = await Database.connect({ kind: 'pglite', dataDir });
    await left.execute(
      `UPDATE identity.webhook_deliveries SET claimed_until = now() + interval '32 seconds', next_attempt_at = now()
        WHERE endpoint_id = $1 AND status = 'pending'`,
      [endpoint.id],
    );
    await left.close();
    killed.status = 200;
    const failedBefore = killed.received.length;

    // When the platform starts again, then the delivery goes out at its next poll, not when the claim ends.
    await boot();
    await allDelivered(endpoint.id, 10_000, 'the claimed delivery delivered well before its claim ends');
    expect(killed.received.length).toBeGreaterThan(failedBefore);
  });

  it('rebuilds the endpoints read model from the events to the same rows', async () => {
    const runtime = app.get<ContextRuntime>(IDENTITY_RUNTIME);
    expect(await settledRebuildMismatches(runtime)).toEqual([]);
  });
});

describe('signed webhooks, distributed (PostgreSQL, Kafka)', () => {
  let h: PlatformHarness;
  const mailer = new RecordingMailer();
  const receiver = new Receiver();
  const http = () => request(h.app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });

  beforeAll(async () => {
    await receiver.start();
    h = await startPlatform('distributed', [
      IdentityModule.forRoot({
        adminKey: ADMIN_KEY,
        mailer,
        tfaKey: TFA_KEY,
        webhooks: { retryScheduleMs: [200, 400], pollMs: 100, allowPrivateTargets: true },
      }),
      MarketplaceModule.forRoot({ billingIntervalMs: 0 }),
      InstanceLifecycleModule.forRoot({ simulatedHost: { pullMs: 20, bootMs: 40, stopMs: 20 } }),
      SyncMaintenanceModule.forRoot({ copyExecutor: new UnavailableCopyExecutor() }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await h?.close();
    await receiver.close();
  });

  it("delivers an instance's state changes and its machine's maintenance to the renter, signed", async () => {
    const renterKey = await verifiedUser(h.app.getHttpServer(), mailer, 'kafka-hooked');
    await grantCredit(h.app.getHttpServer(), ADMIN_KEY, renterKey, 50);
    const { secret } = (
      await http()
        .post('/api/v0/webhooks/')
        .set(as(renterKey))
        .send({ url: receiver.url, event_types: ['instance.state_changed', 'maintenance.scheduled'] })
        .expect(200)
    ).body as { secret: string };
    const { machineId, instanceId } = await rentOnNewMachine(
      h.app.getHttpServer(),
      renterKey,
      'rig-webhooks-kafka',
    );
    await eventually(
      async () =>
        receiver
          .messages()
          .some((m) => m.data.instance_id === instanceId && m.data.actual_status === 'running')
          ? true
          : undefined,
      60_000,
      'the running state at the receiver',
    );
    const sdate = Math.floor(Date.now() / 1000) + 7200;
    await eventually(
      async () =>
        (
          await http()
            .put(`/api/v0/machines/${machineId}/dnotify/`)
            .set(as(ADMIN_KEY))
            .send({ sdate, duration: 1, maintenance_category: 'power' })
        ).status === 200
          ? true
          : undefined,
      60_000,
      'the machine in sync-maintenance',
    );
    const maintenance = await eventually(
      async () => receiver.messages().find((m) => m.type === 'maintenance.scheduled'),
      60_000,
      'the maintenance at the receiver',
    );
    expect(maintenance.data).toMatchObject({
      machine_id: machineId,
      start_time: sdate,
      end_time: sdate + 3600,
      category: 'power',
    });
    for (const received of receiver.received) expect(verifySignature(secret, received)).toBe(true);
  }, 180_000);
});
