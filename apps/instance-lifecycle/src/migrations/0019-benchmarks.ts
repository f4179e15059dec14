import type { Migration } from '@rigmarket/event-sourcing';

/** Machines' benchmark records (read model `benchmarks`, from the private `benchmark-<machineId>` streams). */
export const benchmarks: Migration = {
  id: '0019-benchmarks',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.benchmarks (
        id BIGINT PRIMARY KEY,
        machine_id INTEGER NOT NULL,
        gpu_name TEXT NOT NULL,
        num_gpus INTEGER NOT NULL,
        type TEXT NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        dph_base DOUBLE PRECISION,
        last_update DOUBLE PRECISION NOT NULL
      )`);
    await sql.execute(`CREATE INDEX benchmarks_by_update ON ${s}.benchmarks (last_update)`);
  },
};
