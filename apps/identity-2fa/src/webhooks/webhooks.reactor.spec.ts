import { randomUUID } from 'node:crypto';
import type { EventEnvelope } from '@rigmarket/contracts';
import {
  type ContextRuntime,
  Database,
  type EnvelopeOf,
  coreMigrations,
  readModelsChanged,
  runMigrations,
} from '@rigmarket/event-sourcing';
import { identityContext } from '../identity.context';
import type { WebhookDispatcher } from './webhook-dispatcher';
import { sweepWebhookLog } from './webhook-deliveries';
import { WebhookInterest } from './webhook-interest';
import { webhookSettingsFromEnv } from './webhook-settings';
import { WebhooksReactor } from './webhooks.reactor';

type Source = Parameters<WebhooksReactor['react']>[0] extends EnvelopeOf<infer E> ? E : never;

/**
 * Which account each platform event concerns and what its webhook says, on PGlite with identity's
 * migrations: one pending delivery per enabled endpoint of that account subscribing to the type, none for
 * anyone else, none twice, and credit.low once per fall under the threshold.
 */
describe('webhooks reactor', () => {
  let db: Database;
  let reactor: WebhooksReactor;
  let interest: WebhookInterest;
  let woken = 0;
  const position = new Map<string, number>();

  const envelope = <E extends Source>(
    context: EventEnvelope['context'],
    streamId: string,
    type: E['type'],
    data: E['data'],
    occurredAt = '2026-05-01T12:00:00.000Z',
  ): EnvelopeOf<E> => {
    const streamPosition = (position.get(streamId) ?? 0) + 1;
    position.set(streamId, streamPosition);
    return {
      eventId: randomUUID(),
      type,
      schemaVersion: 1,
      streamId,
      streamType: streamId.split('-')[0]!,
      streamPosition,
      globalPosition: '1',
      occurredAt,
      context,
      data,
      metadata: { correlationId: 'spec', causationId: 'spec' },
    } as EnvelopeOf<E>;
  };

  /** A change to the endpoints read model, told at commit as its projection's would be. */
  const endpointsChange = (statement: string, params: unknown[]) =>
    db.transaction(async (sql) => {
      await sql.execute(statement, params);
      readModelsChanged(sql, ['identity.webhook_endpoints']);
    });
  const endpoint = (id: number, userId: number, types: string[], enabled = true) =>
    endpointsChange(
      `INSERT INTO identity.webhook_endpoints (endpoint_id, user_id, url, event_types, sealed_secret, enabled, created_at, updated_at)
       VALUES ($1, $2, 'https://example.com/', $3::text[], 'v1.x', $4, now(), now())`,
      [id, userId, types, enabled],
    );

  const deliveries = async () =>
    (
      await db.query<{ endpoint_id: number; event_type: string; payload: string; message_id: string }>(
        `SELECT endpoint_id, event_type, payload, message_id FROM identity.webhook_deliveries ORDER BY delivery_id`,
      )
    ).map((d) => ({ endpoint: Number(d.endpoint_id), type: d.event_type, data: JSON.parse(d.payload).data }));

  /** The user_credit read model as it stands once it applied the ledger event. */
  const credit = async (event: EnvelopeOf<Source>, userId: number, dollars: number) => {
    await db.execute(
      `INSERT INTO identity.user_credit (user_id, credit) VALUES ($1, $2) ON CONFLICT (user_id) DO UPDATE SET credit = $2`,
      [userId, dollars],
    );
    await db.execute(
      `INSERT INTO identity.projection_stream_positions (projection, stream_id, position) VALUES ('user_credit', $1, $2)
       ON CONFLICT (projection, stream_id) DO UPDATE SET position = $2`,
      [event.streamId, event.streamPosition],
    );
  };

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    await runMigrations(db, 'identity', [...coreMigrations, ...identityContext.migrations]);
    const dispatcher = { wake: () => (woken += 1) } as unknown as WebhookDispatcher;
    interest = new WebhookInterest({ db });
    reactor = new WebhooksReactor(
      { db } as unknown as ContextRuntime,
      webhookSettingsFromEnv({}),
      dispatcher,
      interest,
    );
    // Account 2 rents instance 11 on machine 5 (owned by 7); account 3 has an endpoint for everything.
    await db.execute(
      `INSERT INTO identity.webhook_instance_owners (instance_id, owner_id, machine_id) VALUES (11, 2, 5), (12, 4, 5)`,
    );
    await endpoint(1, 2, ['instance.state_changed', 'instance.outbid', 'sync.completed', 'sync.failed']);
    await endpoint(2, 2, ['credit.low', 'credit.exhausted', 'maintenance.scheduled']);
    await endpoint(3, 3, ['instance.state_changed', 'credit.exhausted', 'maintenance.scheduled']);
    await endpoint(4, 7, ['maintenance.scheduled']);
    await endpoint(5, 2, ['instance.state_changed'], false);
  });
  afterAll(() => db.close());
  beforeEach(() => db.execute(`DELETE FROM identity.webhook_deliveries`));

  it("addresses an instance's events to its renter's subscribed, enabled endpoints, once", async () => {
    const changed = envelope('instance', 'instance-11', 'InstanceStateChanged', {
      instanceId: 11,
      actualStatus: 'running',
      sshHost: null,
      sshPort: null,
      ports: {},
      statusMsg: 'up',
      at: '2026-05-01T12:00:00.000Z',
    });
    await reactor.react(changed);
    await reactor.react(changed);
    await reactor.react(
      envelope('instance', 'instance-11', 'InstanceOutbid', {
        instanceId: 11,
        machineId: 5,
        numGpus: 1,
        at: '2026-05-01T12:00:00.000Z',
        reason: 'credit',
      }),
    );
    await reactor.react(
      envelope('sync', 'sync-11', 'SyncFailed', { instanceId: 11, jobId: 3, reason: 'disk full', at: 'x' }),
    );
    expect(await deliveries()).toEqual([
      {
        endpoint: 1,
        type: 'instance.state_changed',
        data: { instance_id: 11, actual_status: 'running', status_msg: 'up', at: '2026-05-01T12:00:00.000Z' },
      },
      {
        endpoint: 1,
        type: 'instance.outbid',
        data: {
          instance_id: 11,
          machine_id: 5,
          num_gpus: 1,
          reason: 'credit',
          at: '2026-05-01T12:00:00.000Z',
        },
      },
      {
        endpoint: 1,
        type: 'sync.failed',
        data: { instance_id: 11, job_id: 3, reason: 'disk full', at: 'x' },
      },
    ]);
    expect(woken).toBeGreaterThan(0);
  });

  it('queues an event only while some enabled endpoint subscribes to its type, and sees endpoint changes at once', async () => {
    const outbid = envelope('instance', 'instance-11', 'InstanceOutbid', {
      instanceId: 11,
      machineId: 5,
      numGpus: 1,
      at: '2026-05-01T12:00:00.000Z',
    });
    const synced = envelope('sync', 'sync-11', 'SyncCompleted', {
      instanceId: 11,
      jobId: 4,
      bytesCopied: 1,
      at: 'x',
    });
    /** What the reactor answers once it knows the endpoints as they stand. */
    const wantsNow = async (event: EnvelopeOf<Source>) => {
      reactor.wants(event);
      await interest.settled();
      return reactor.wants(event);
    };
    expect(await wantsNow(outbid)).toBe(true);
    expect(await wantsNow(synced)).toBe(true);

    // Endpoint 1 was the only one for instance.outbid and sync.*: disabled, their events are not queued.
    await endpointsChange(`UPDATE identity.webhook_endpoints SET enabled = FALSE WHERE endpoint_id = 1`, []);
    expect(await wantsNow(outbid)).toBe(false);
    expect(await wantsNow(synced)).toBe(false);
    expect(
      await wantsNow(
        envelope('marketplace', 'ledger-2', 'CreditExhausted', { userId: 2, balanceMicros: 0, at: 'x' }),
      ),
    ).toBe(true);

    // Enabled again: the very next event counts as wanted, before the endpoints are read again.
    await endpointsChange(`UPDATE identity.webhook_endpoints SET enabled = TRUE WHERE endpoint_id = 1`, []);
    expect(reactor.wants(outbid)).toBe(true);
    expect(await wantsNow(synced)).toBe(true);
  });

  it('waits for an instance whose owner is not known yet, and gives up on an old event', async () => {
    const data = { instanceId: 99, jobId: 1, bytesCopied: 5, at: 'x' };
    await expect(
      reactor.react(envelope('sync', 'sync-99', 'SyncCompleted', data, new Date().toISOString())),
    ).rejects.toThrow(/owner of instance 99/);
    await reactor.react(envelope('sync', 'sync-99', 'SyncCompleted', data));
    expect(await deliveries()).toEqual([]);
  });

  it("sends a machine's maintenance to its owner and the renters of its live instances", async () => {
    await reactor.react(
      envelope('sync', 'maintenance-5', 'MaintenanceScheduled', {
        machineId: 5,
        windowId: 1,
        ownerId: 7,
        startTime: 1,
        endTime: 2,
        durationHours: 1,
        category: 'power',
        at: 'x',
      }),
    );
    expect((await deliveries()).map((d) => [d.endpoint, d.type])).toEqual([
      [2, 'maintenance.scheduled'],
      [4, 'maintenance.scheduled'],
    ]);
  });

  it('sends credit.low once per fall under the threshold, and credit.exhausted', async () => {
    const charge = (micros: number) =>
      envelope('marketplace', 'ledger-2', 'AccountCharged', {
        userId: 2,
        instanceId: 11,
        machineId: 5,
        kind: 'gpu',
        amountMicros: micros,
        periodStart: 'a',
        periodEnd: 'b',
        at: 'x',
      });
    const first = charge(1);
    await expect(reactor.react(first)).rejects.toThrow(/user_credit has not applied/);
    await credit(first, 2, 6);
    await reactor.react(first);
    const low = charge(2);
    await credit(low, 2, 4.5);
    await reactor.react(low);
    const lower = charge(3);
    await credit(lower, 2, 3);
    await reactor.react(lower);
    const granted = envelope('marketplace', 'ledger-2', 'CreditGranted', {
      userId: 2,
      amountMicros: 10_000_000,
      grantedBy: 1,
      note: null,
      at: 'x',
    });
    await credit(granted, 2, 13);
    await reactor.react(granted);
    const again = charge(4);
    await credit(again, 2, 1);
    await reactor.react(again);
    await reactor.react(
      envelope('marketplace', 'ledger-2', 'CreditExhausted', { userId: 2, balanceMicros: -5, at: 'x' }),
    );
    expect(await deliveries()).toEqual([
      { endpoint: 2, type: 'credit.low', data: { balance: 4.5, threshold: 5, at: 'x' } },
      { endpoint: 2, type: 'credit.low', data: { balance: 1, threshold: 5, at: 'x' } },
      { endpoint: 2, type: 'credit.exhausted', data: { balance: -0.000005, at: 'x' } },
    ]);
  });

  it('keeps the log for its retention: old finished deliveries and those of endpoints deleted long ago go', async () => {
    await endpoint(6, 8, ['credit.low']);
    await db.execute(
      `UPDATE identity.webhook_endpoints SET deleted_at = now() - interval '40 days' WHERE endpoint_id = 6`,
    );
    const add = (id: number, endpointId: number, status: string, finishedDaysAgo: number | null) =>
      db.execute(
        `INSERT INTO identity.webhook_deliveries (delivery_id, endpoint_id, message_id, event_type, payload, status, attempts_left, next_attempt_at, finished_at)
         VALUES ($1, $2, $3, 'credit.low', '{}', $4, 1, now(), now() - ($5 || ' days')::interval)`,
        [id, endpointId, `msg_${id}`, status, finishedDaysAgo === null ? null : String(finishedDaysAgo)],
      );
    await add(101, 2, 'delivered', 31);
    await add(102, 2, 'failed', 29);
    await add(103, 2, 'pending', null);
    await add(104, 6, 'pending', null);
    expect(await sweepWebhookLog(db, 30)).toBe(2);
    const left = await db.query<{ delivery_id: string }>(
      `SELECT delivery_id::text FROM identity.webhook_deliveries ORDER BY delivery_id`,
    );
    expect(left.map((r) => Number(r.delivery_id))).toEqual([102, 103]);
  });
});
