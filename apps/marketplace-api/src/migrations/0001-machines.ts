import type { Migration } from '@rigmarket/event-sourcing';

/** The machines read model's first shape; 0003 extends it (migrations are never edited once shipped). */
export const machines: Migration = {
  id: '0001-machines',
  replaces: '0002-machines-read-model',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.machines (
        machine_id INTEGER PRIMARY KEY,
        owner_id INTEGER NOT NULL,
        gpu_name TEXT NOT NULL,
        num_gpus INTEGER NOT NULL,
        listed BOOLEAN NOT NULL DEFAULT FALSE,
        details JSONB NOT NULL DEFAULT '{}'
      )`);
    await sql.execute(`CREATE INDEX machines_by_owner ON ${s}.machines (owner_id, machine_id)`);
  },
};
