import type { Migration } from '@rigmarket/event-sourcing';

/** Idempotency-Key on PUT /asks: the first answer is kept 24 hours per (renter, key). */
export const createIdempotency: Migration = {
  id: '0002-create-idempotency',
  replaces: '0003-create-idempotency',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.create_idempotency (
        owner_id INTEGER NOT NULL,
        idem_key TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        instance_id INTEGER NOT NULL,
        instance_api_key TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (owner_id, idem_key)
      )`);
  },
};
