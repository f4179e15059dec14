import type { Migration } from '@rigmarket/event-sourcing';

/** Volume offers (one per machine whose host listed disk space) and renters' volumes. */
export const volumes: Migration = {
  id: '0003-volumes',
  replaces: '0004-volumes',
  async up(sql, s) {
    await sql.execute(`CREATE SEQUENCE ${s}.volume_ids START 1`);
    await sql.execute(`
      CREATE TABLE ${s}.volume_offers (
        machine_id INTEGER PRIMARY KEY,
        host_id INTEGER NOT NULL,
        size_gb DOUBLE PRECISION NOT NULL,
        used_gb DOUBLE PRECISION NOT NULL DEFAULT 0,
        price_disk DOUBLE PRECISION NOT NULL,
        end_date DOUBLE PRECISION,
        listed BOOLEAN NOT NULL,
        listed_at DOUBLE PRECISION NOT NULL
      )`);
    await sql.execute(`
      CREATE TABLE ${s}.volumes (
        volume_id INTEGER PRIMARY KEY,
        owner_id INTEGER NOT NULL,
        machine_id INTEGER NOT NULL,
        size_gb DOUBLE PRECISION NOT NULL,
        name TEXT,
        price_disk DOUBLE PRECISION NOT NULL,
        start_date DOUBLE PRECISION NOT NULL,
        deleted_at DOUBLE PRECISION
      )`);
    await sql.execute(
      `CREATE INDEX volumes_by_owner ON ${s}.volumes (owner_id, volume_id) WHERE deleted_at IS NULL`,
    );
  },
};
