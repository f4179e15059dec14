import type { Migration } from '@rigmarket/event-sourcing';

/**
 * What instance-lifecycle knows of the renters' volumes (marketplace's public volume events), so that
 * volume_info can link one: it must exist, be the renter's, and live on the instance's machine. Also
 * which machines run VMs (market_machines.vms_enabled, fed by MachineRegistered).
 */
export const marketVolumesAndVms: Migration = {
  id: '0005-market-volumes-and-vms',
  replaces: '0006-market-volumes-and-vms',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.market_volumes (
        volume_id INTEGER PRIMARY KEY,
        owner_id INTEGER NOT NULL,
        machine_id INTEGER NOT NULL,
        size_gb DOUBLE PRECISION NOT NULL,
        name TEXT,
        deleted BOOLEAN NOT NULL DEFAULT FALSE
      )`);
    await sql.execute(
      `ALTER TABLE ${s}.market_machines ADD COLUMN vms_enabled BOOLEAN NOT NULL DEFAULT FALSE`,
    );
  },
};
