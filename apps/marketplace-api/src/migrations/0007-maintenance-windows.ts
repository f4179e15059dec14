import type { Migration } from '@rigmarket/event-sourcing';

/**
 * Hosts' maintenance windows, from sync-maintenance's public events over the transport. The offer
 * search reads them at query time (offer-query.ts, rentableUntil): an offer can be rented only until
 * the next window starts, and not at all during one. Windows are kept past their end (the search
 * ignores them); a cancel deletes the machine's pending ones.
 */
export const maintenanceWindows: Migration = {
  id: '0007-maintenance-windows',
  replaces: '0007-maintenance-windows',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.maintenance_windows (
        window_id INTEGER PRIMARY KEY,
        machine_id INTEGER NOT NULL,
        start_time DOUBLE PRECISION NOT NULL,
        end_time DOUBLE PRECISION NOT NULL
      )`);
    await sql.execute(
      `CREATE INDEX maintenance_windows_by_machine ON ${s}.maintenance_windows (machine_id, end_time)`,
    );
  },
};
