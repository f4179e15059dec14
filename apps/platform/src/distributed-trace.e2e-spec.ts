import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { KafkaTransport } from '@rigmarket/messaging';
import { createTestDatabase, eventually, requiredEnv, uniqueName } from '@rigmarket/testing';
import request from 'supertest';
import { HOST_HARDWARE, LIST_MACHINE_ASK } from './testing/fixtures';

/**
 * One rent is one trace across the four apps (docs/operations.md, Traces): each app runs as its own process
 * from its build, on PostgreSQL and Kafka, exporting spans with the standard OTEL_* variables (OTLP over
 * HTTP, JSON) to a small receiver in this test. The rent's request carries a traceparent; spans of that trace
 * must come from instance-lifecycle (the rent), and, after the Kafka hop, from marketplace-api,
 * sync-maintenance and identity-2fa (their projections of the instance's events).
 */
const ADMIN_KEY = 'trace-admin-key-0123456789abcdef';
const APPS = [
  { name: 'identity-2fa', port: 18291 },
  { name: 'marketplace-api', port: 18292 },
  { name: 'instance-lifecycle', port: 18293 },
  { name: 'sync-maintenance', port: 18294 },
] as const;
const url = (name: (typeof APPS)[number]['name']) =>
  `http://127.0.0.1:${APPS.find((a) => a.name === name)!.port}`;

interface ReceivedSpan {
  service: string;
  traceId: string;
  name: string;
}
interface OtlpAttribute {
  key: string;
  value: { stringValue?: string };
}
interface OtlpBody {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{ spans?: Array<{ traceId: string; name: string }> }>;
  }>;
}

describe('one rent, one trace across the four apps (distributed, OTLP)', () => {
  const received: ReceivedSpan[] = [];
  let receiver: Server;
  let drop: () => Promise<void>;
  const children: ChildProcess[] = [];
  const as = { Authorization: `Bearer ${ADMIN_KEY}` };

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as OtlpBody;
        for (const rs of body.resourceSpans ?? []) {
          const service =
            rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? '?';
          for (const ss of rs.scopeSpans ?? [])
            for (const span of ss.spans ?? [])
              received.push({ service, traceId: span.traceId, name: span.name });
        }
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;
    const database = await createTestDatabase();
    drop = database.drop;
    const namespace = `${uniqueName('trace')}.`;
    const kafka = new KafkaTransport({
      brokers: requiredEnv('KAFKA_BROKERS').split(','),
      clientId: 'trace-topics',
      namespace,
    });
    await kafka.ensureTopics();
    await kafka.close();
    for (const app of APPS)
      children.push(
        spawn(process.execPath, [join(__dirname, `../../${app.name}/dist/main.js`)], {
          env: {
            ...process.env,
            DATABASE_URL: database.url,
            KAFKA_BROKERS: requiredEnv('KAFKA_BROKERS'),
            RIGMARKET_KAFKA_NAMESPACE: namespace,
            RIGMARKET_ADMIN_KEY: ADMIN_KEY,
            PORT: String(app.port),
            LOG_LEVEL: 'warn',
            OTEL_TRACES_EXPORTER: 'otlp',
            OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
            OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint,
            OTEL_BSP_SCHEDULE_DELAY: '200',
          },
          stdio: ['ignore', 'inherit', 'inherit'],
        }),
      );
    for (const app of APPS)
      await eventually(
        async () =>
          (
            await request(url(app.name))
              .get('/readyz')
              .catch(() => undefined)
          )?.status === 200
            ? true
            : undefined,
        120_000,
        `${app.name} to start`,
      );
  }, 180_000);

  afterAll(async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
    receiver?.close();
    await drop?.();
  });

  it("shows the rent's trace id in spans of all four apps", async () => {
    // The admin's key reaches marketplace-api over Kafka: then a machine with an ask, and credit.
    const machine = await eventually(
      async () => {
        const res = await request(url('marketplace-api'))
          .post('/api/v0/machines/')
          .set(as)
          .send(HOST_HARDWARE);
        return res.status === 201 ? (res.body.machine_id as number) : undefined;
      },
      60_000,
      'the admin key in marketplace-api',
    );
    await request(url('marketplace-api'))
      .put('/api/v0/machines/create_asks/')
      .set(as)
      .send({ machine, ...LIST_MACHINE_ASK })
      .expect(200);
    const adminId = (await request(url('identity-2fa')).get('/api/v0/users/current/').set(as).expect(200))
      .body.id as number;
    await eventually(
      async () =>
        (
          await request(url('marketplace-api'))
            .post('/api/v0/credit/')
            .set(as)
            .send({ user_id: adminId, amount: 100, note: 'trace test' })
        ).status === 200
          ? true
          : undefined,
      60_000,
      'the admin in marketplace-api',
    );
    const offer = await eventually(async () => {
      const res = await request(url('marketplace-api')).post('/api/v0/bundles/').set(as).send({});
      return (res.body.offers as Array<{ id: number }> | undefined)?.[0]?.id;
    });
    // The rent, once instance-lifecycle has the offer and the credit: each try its own trace.
    const traceId = await eventually(
      async () => {
        const id = randomBytes(16).toString('hex');
        const res = await request(url('instance-lifecycle'))
          .put(`/api/v0/asks/${offer}/`)
          .set(as)
          .set('traceparent', `00-${id}-${randomBytes(8).toString('hex')}-01`)
          .send({ image: 'busybox', disk: 10 });
        return res.status === 200 ? id : undefined;
      },
      60_000,
      'the rent to be accepted',
    );
    const services = await eventually(
      async () => {
        const found = new Set(received.filter((s) => s.traceId === traceId).map((s) => s.service));
        return found.size === APPS.length ? found : undefined;
      },
      60_000,
      `spans of trace ${traceId} from every app`,
    ).catch((error: Error) => {
      throw new Error(
        `${error.message}; spans of the trace: ${JSON.stringify(
          received.filter((s) => s.traceId === traceId).map((s) => `${s.service}: ${s.name}`),
        )}`,
      );
    });
    expect([...services].sort()).toEqual(APPS.map((a) => a.name).sort());
    const ofTrace = received.filter((s) => s.traceId === traceId);
    expect(ofTrace).toContainEqual({
      service: 'instance-lifecycle',
      traceId,
      name: 'PUT /api/v0/asks/:offerId',
    });
    // On the other side of Kafka: their projections' (or reactors') spans, children of the publish.
    for (const [service, schema] of [
      ['marketplace-api', 'marketplace'],
      ['sync-maintenance', 'sync_maintenance'],
      ['identity-2fa', 'identity'],
    ])
      expect(ofTrace).toContainEqual(
        expect.objectContaining({ service, name: expect.stringMatching(new RegExp(`^${schema}/`)) }),
      );
  });
});
