import type { Migration } from '@rigmarket/event-sourcing';

/** Replaces 0003's plain columns; records made before it are dropped (they last 24 hours anyway). */
export const createIdempotencySealed: Migration = {
  id: '0003-create-idempotency-sealed',
  replaces: '0004-create-idempotency-sealed',
  async up(sql, s) {
    await sql.execute(`DELETE FROM ${s}.create_idempotency`);
    await sql.execute(`ALTER TABLE ${s}.create_idempotency RENAME COLUMN idem_key TO idem_key_hash`);
    await sql.execute(
      `ALTER TABLE ${s}.create_idempotency RENAME COLUMN instance_api_key TO instance_api_key_sealed`,
    );
  },
};
