import type { Migration } from '@rigmarket/event-sourcing';

/**
 * Volume offers as instance-lifecycle knows them (VolumeSpaceListed/Unlisted on marketplace's machine
 * streams, VolumeCreated/Deleted for the space used), to refuse a create_new that cannot fit at once; and
 * the instance keys of instances waiting for such a volume (the host gets the key when it provisions).
 */
export const marketVolumeOffers: Migration = {
  id: '0007-market-volume-offers',
  replaces: '0008-market-volume-offers',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.market_volume_offers (
        machine_id INTEGER PRIMARY KEY,
        size_gb DOUBLE PRECISION NOT NULL DEFAULT 0,
        used_gb DOUBLE PRECISION NOT NULL DEFAULT 0,
        listed BOOLEAN NOT NULL DEFAULT FALSE,
        end_date DOUBLE PRECISION
      )`);
    await sql.execute(`
      CREATE TABLE ${s}.pending_provisions (
        instance_id INTEGER PRIMARY KEY,
        instance_api_key_sealed TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
      )`);
  },
};
