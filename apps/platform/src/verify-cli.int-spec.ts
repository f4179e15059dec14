import type { INestApplication } from '@nestjs/common';
import { Database } from '@rigmarket/event-sourcing';
import { InProcessTransport } from '@rigmarket/messaging';
import { createTestDatabase } from '@rigmarket/testing';
import request from 'supertest';
import { createEmbeddedApp } from './platform';
import { runOperatorCli } from './testing/operator-cli';

const ADMIN_KEY = 'verify-admin-key';

/** `rigmarket verify` and `rigmarket rebuild --all` on a platform's PostgreSQL database. */
describe('rigmarket verify and rebuild --all', () => {
  let database: { url: string; drop: () => Promise<void> };
  let db: Database;
  const cli = (...args: string[]) => runOperatorCli(database.url, ...args);

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await Database.connect({ kind: 'postgres', url: database.url });
    const app: INestApplication = await createEmbeddedApp({
      db,
      transport: new InProcessTransport(),
      identity: { adminKey: ADMIN_KEY },
      marketplace: { billingIntervalMs: 0 },
    });
    await app.init();
    // more events than the admin's bootstrap: a second API key
    await request(app.getHttpServer())
      .post('/api/v0/auth/apikeys/')
      .set('Authorization', `Bearer ${ADMIN_KEY}`)
      .send({ name: 'second' })
      .expect((r) => expect(r.status).toBeLessThan(300));
    await app.close();
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  it('verify exits 0 on a platform whose read models equal their events', async () => {
    const run = await cli('verify');
    expect(run.stdout).toContain('identity/users: equal');
    expect(run.stdout).toContain('check ledger balances: ok');
    expect(run.stdout).toContain('verify: ok');
    expect(run.code).toBe(0);
  }, 60_000);

  it('history --as-of prints the events up to then and, last, the object as they had made it', async () => {
    const now = await cli('history', 'identity', 'api_key-1', '--as-of', String(Date.now() / 1000));
    expect(now.code).toBe(0);
    const lines = now.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ type: 'ApiKeyCreated', streamId: 'api_key-1' });
    expect(lines[lines.length - 1]).toMatchObject({
      version: lines.length - 1,
      state: { status: 'active', keyId: 1, userId: 1 },
    });
    const before = await cli('history', 'identity', 'api_key-1', '--as-of', '0');
    expect(before.code).toBe(1);
    expect(before.stderr).toContain('No events in stream api_key-1');
  }, 60_000);

  it('verify exits 1 and prints the row of a planted difference, leaving the live table as it was', async () => {
    await db.execute(`UPDATE identity.users SET full_name = 'planted-difference' WHERE user_id = 1`);
    const run = await cli('verify');
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('identity/users: DIFFERS in 1 table(s)');
    expect(run.stdout).toMatch(/identity\.users live only: +\{.*"planted-difference"/);
    expect(run.stdout).toMatch(/identity\.users rebuilt only: +\{"user_id":1,/);
    expect(run.stdout).toContain('verify: DIFFERENCES FOUND');
    const [row] = await db.query<{ full_name: string }>(
      `SELECT full_name FROM identity.users WHERE user_id = 1`,
    );
    expect(row?.full_name).toBe('planted-difference');
  }, 60_000);

  it('verify exits 1 on a ledger that does not balance, naming the account and each sum', async () => {
    // What the float user_credit projection left: a credit of $0.06 the ledger never recorded.
    await db.execute(`INSERT INTO identity.user_credit (user_id, credit) VALUES (1, 0.06)`);
    try {
      const run = await cli('verify');
      expect(run.code).toBe(1);
      expect(run.stdout).toContain('check ledger balances: 1 problem(s)');
      expect(run.stdout).toMatch(/ {2}\{"userId":1,"granted":"0\.000000",.*"userCredit":"0\.060000"\}/);
    } finally {
      await db.execute(`DELETE FROM identity.user_credit WHERE user_id = 1`);
    }
  }, 60_000);

  it('rebuild --all repairs it; a failing projection is reported, the others still rebuilt, exit 1', async () => {
    const repaired = await cli('rebuild', '--all');
    expect(repaired.code).toBe(0);
    expect(repaired.stdout).toMatch(/rebuilt identity\/users: \d+ events applied/);
    expect((await cli('verify')).code).toBe(0);

    await db.execute(`ALTER TABLE identity.users RENAME TO users_gone`);
    try {
      const run = await cli('rebuild', '--all');
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/FAILED identity\/users: .*users/);
      // the projections after it were still rebuilt
      expect(run.stdout).toMatch(/rebuilt sync\/known_instances: \d+ events applied/);
      expect(run.stdout).toMatch(/\d+ of \d+ rebuilt, 1 failed/);
    } finally {
      await db.execute(`ALTER TABLE identity.users_gone RENAME TO users`);
    }
  }, 60_000);

  it('verify --chain exits 0 on a clean store, printing every context head hash', async () => {
    const run = await cli('verify', '--chain');
    expect(run.code).toBe(0);
    const [head] = await db.query<{ hash: string; gp: string }>(
      `SELECT hash, global_position::text AS gp FROM identity.event_chain_head`,
    );
    expect(run.stdout).toMatch(
      new RegExp(`identity: \\d+ event\\(s\\), head ${head!.hash} at global position ${head!.gp}`),
    );
    expect(run.stdout).toMatch(/marketplace: \d+ event\(s\), head [0-9a-f]{64} at global position \d+/);
    expect(run.stdout).toContain('verify --chain: ok');
  }, 60_000);

  it('verify --chain exits 1 on an edited event, naming the link, expected and found hash', async () => {
    const [row] = await db.query<{
      gp: string;
      stream_id: string;
      stream_position: number;
      hash: string;
      data: string;
    }>(
      `SELECT global_position::text AS gp, stream_id, stream_position, hash, data::text AS data
         FROM identity.events ORDER BY global_position LIMIT 1 OFFSET 1`,
    );
    await db.execute(
      `UPDATE identity.events SET data = data || '{"planted": true}' WHERE global_position = $1`,
      [row!.gp],
    );
    try {
      const run = await cli('verify', '--chain');
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(
        new RegExp(
          `identity: BROKEN after 1 event\\(s\\): global position ${row!.gp}, stream ${row!.stream_id} ` +
            `position ${row!.stream_position}: expected [0-9a-f]{64}, found ${row!.hash}`,
        ),
      );
      expect(run.stdout).toContain('verify --chain: BROKEN');
    } finally {
      await db.execute(`UPDATE identity.events SET data = $1::jsonb WHERE global_position = $2`, [
        row!.data,
        row!.gp,
      ]);
    }
    expect((await cli('verify', '--chain')).code).toBe(0);
  }, 60_000);
});
