import type { Migration } from '@rigmarket/event-sourcing';

/**
 * Offers show free GPUs only: instance-lifecycle's public InstanceCreated/InstanceDestroyed (and
 * InstanceOutbid / a later start), over the transport, keep one row per live instance here; a machine's allocated GPUs are their sum (GPUS_ALLOCATED). Eventually
 * consistent: instance-lifecycle's allocation stream stays the authority (a just-taken offer is refused
 * there with offer_unavailable).
 */
export const instanceAllocations: Migration = {
  id: '0005-instance-allocations',
  replaces: '0006-instance-allocations',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.instance_allocations (
        instance_id INTEGER PRIMARY KEY,
        machine_id INTEGER NOT NULL,
        num_gpus INTEGER NOT NULL,
        held BOOLEAN NOT NULL DEFAULT TRUE
      )`);
    await sql.execute(
      `CREATE INDEX instance_allocations_by_machine ON ${s}.instance_allocations (machine_id)`,
    );
  },
};
