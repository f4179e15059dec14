import { watchStatements } from '@rigmarket/testing';
import request from 'supertest';
import { startEmbeddedTestApp } from './testing/embedded-test-app';

const ADMIN_KEY = 'app-close-admin-key';

/**
 * An app's close() resolves only after its background loops (outbox relays, reactor workers, dispatchers,
 * sweepers, the agent channel) stopped and their statements ended: the database closes right after it, so a
 * statement later would fail (and, on PGlite before the pool refused, opened the database again after the test's
 * environment was gone, which crashed a jest run).
 */
describe('closing the embedded platform', () => {
  it('with every loop polling all the time, no statement is in flight when close() resolves and none begins later', async () => {
    // Polls every millisecond: at close, the relays' and reactor workers' polls are in progress.
    const platform = await startEmbeddedTestApp({
      identity: { adminKey: ADMIN_KEY },
      marketplace: { billingIntervalMs: 0 },
      relay: { pollIntervalMs: 1 },
      reactors: { pollIntervalMs: 1 },
    });
    let closed = false;
    try {
      const server = platform.app.getHttpServer();
      // Work for the relays and reactors: a key made and deleted, whose events every context follows.
      const { body } = await request(server)
        .post('/api/v0/auth/apikeys/')
        .set({ Authorization: `Bearer ${ADMIN_KEY}` })
        .send({ name: 'closing' })
        .expect(201);
      await request(server)
        .delete(`/api/v0/auth/apikeys/${body.id}/`)
        .set({ Authorization: `Bearer ${ADMIN_KEY}` })
        .send({})
        .expect(200);
      const statements = watchStatements(platform.db);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(statements.began).toBeGreaterThan(0);
      await platform.app.close();
      closed = true;
      expect(statements.inFlight).toBe(0);
      const began = statements.began;
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(statements.began).toBe(began);
      statements.restore();
    } finally {
      if (closed) await platform.db.close();
      else await platform.close();
    }
  });
});
