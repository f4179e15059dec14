import type { Migration } from '@rigmarket/event-sourcing';

/** read-models/volume-clones: the volumes made by `vastai clone volume` and how their copy went. */
export const volumeClones: Migration = {
  id: '0022-volume-clones',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.volume_clones (
        volume_id INTEGER PRIMARY KEY,
        source_volume_id INTEGER,
        status TEXT NOT NULL,
        status_msg TEXT,
        bytes_copied DOUBLE PRECISION
      )`);
  },
};
