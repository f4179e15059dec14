import type { Migration } from '@rigmarket/event-sourcing';

/**
 * The rents whose provisioning workflow has not ended (read model `open_provisionings`, from the
 * `provisioning-<instanceId>` streams): ProvisioningRecovery gives up those that made no progress for a while.
 */
export const openProvisionings: Migration = {
  id: '0015-open-provisionings',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.open_provisionings (
        instance_id INTEGER PRIMARY KEY,
        machine_id INTEGER NOT NULL,
        step TEXT NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL
      )`);
    await sql.execute(`CREATE INDEX open_provisionings_by_time ON ${s}.open_provisionings (updated_at)`);
  },
};
