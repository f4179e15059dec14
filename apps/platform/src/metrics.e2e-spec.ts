import type { INestApplication } from '@nestjs/common';
import { BillingMeter } from '@rigmarket/marketplace-api';
import { eventually } from '@rigmarket/testing';
import request from 'supertest';
import { type EmbeddedTestApp, startEmbeddedTestApp } from './testing/embedded-test-app';
import { HOST_HARDWARE, LIST_MACHINE_ASK } from './testing/fixtures';
import { grantCredit } from './testing/users';

/**
 * GET /metrics on the embedded platform (docs/operations.md, Metrics): after a rent, the request shows under
 * its route pattern and context, the rent's events and the new instance are counted, the scrape-time
 * gauges cover every context, and nothing secret (the key used) is in the text.
 */
const ADMIN_KEY = 'metrics-admin-key-0123456789abcdef';

/** The value of one series, e.g. `rigmarket_outbox_depth{context="instance"}`; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const body = line.slice(name.length + 1, line.lastIndexOf('}'));
    const found = Object.fromEntries([...body.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(line.split(' ').pop());
  }
  return undefined;
}

describe('GET /metrics (embedded platform)', () => {
  let platform: EmbeddedTestApp | undefined;
  let app: INestApplication;
  const as = { Authorization: `Bearer ${ADMIN_KEY}` };
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    platform = await startEmbeddedTestApp({
      identity: { adminKey: ADMIN_KEY },
      marketplace: { billingIntervalMs: 0 },
    });
    app = platform.app;
  });
  afterAll(async () => {
    await platform?.close();
  });

  it('counts a rent by route and context, and reads the gauges when scraped', async () => {
    const machine = (await http().post('/api/v0/machines/').set(as).send(HOST_HARDWARE).expect(201)).body
      .machine_id as number;
    await http()
      .put('/api/v0/machines/create_asks/')
      .set(as)
      .send({ machine, ...LIST_MACHINE_ASK })
      .expect(200);
    await grantCredit(app.getHttpServer(), ADMIN_KEY, ADMIN_KEY);
    const offer = await eventually(async () => {
      const res = await http().post('/api/v0/bundles/').set(as).send({});
      return (res.body.offers as Array<{ id: number }> | undefined)?.[0]?.id;
    });
    await http().put(`/api/v0/asks/${offer}/`).set(as).send({ image: 'busybox', disk: 10 }).expect(200);
    await http().get('/api/v0/instances/424242/').set(as); // an unknown id: still the route's pattern
    await app.get(BillingMeter).runOnce(); // a billing run, by hand (its interval is off here)

    const res = await http().get('/metrics').expect(200);
    expect(res.headers['content-type']).toContain('text/plain');
    const text = res.text;
    expect(
      sample(text, 'rigmarket_http_request_duration_seconds_count', {
        context: 'instance',
        method: 'PUT',
        route: '/api/v0/asks/:offerId',
        status: '200',
      }),
    ).toBe(1);
    expect(
      sample(text, 'rigmarket_http_request_duration_seconds_count', {
        context: 'instance',
        method: 'GET',
        route: '/api/v0/instances/:id',
      }),
    ).toBe(1);
    // The raw URL never becomes a label.
    expect(text).not.toContain('/424242');
    expect(text).not.toContain(ADMIN_KEY);
    expect(
      sample(text, 'rigmarket_events_appended_total', { context: 'instance', stream_type: 'instance' }),
    ).toBeGreaterThan(0);
    expect(sample(text, 'rigmarket_instances', { context: 'instance', state: 'creating' })).toBe(1);
    for (const context of ['identity', 'marketplace', 'instance', 'sync']) {
      expect(sample(text, 'rigmarket_outbox_depth', { context })).toBeGreaterThanOrEqual(0);
      expect(sample(text, 'rigmarket_outbox_oldest_unpublished_seconds', { context })).toBeGreaterThanOrEqual(
        0,
      );
    }
    expect(
      sample(text, 'rigmarket_projection_lag_events', { context: 'marketplace', projection: 'machines' }),
    ).toBeGreaterThanOrEqual(0);
    expect(
      sample(text, 'rigmarket_reactor_queue_depth', { context: 'marketplace', reactor: 'host_earnings' }),
    ).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'rigmarket_outbox_published_total', { context: 'marketplace' })).toBeGreaterThan(0);
    expect(text).toMatch(/^rigmarket_agent_connections 0$/m);
    expect(sample(text, 'rigmarket_job_runs_total', { job: 'BillingMeter', outcome: 'ok' })).toBe(1);
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
  });
});
