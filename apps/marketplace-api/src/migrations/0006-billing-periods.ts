import type { Migration } from '@rigmarket/event-sourcing';

/**
 * What each instance cost when: one row per period between two InstanceBillingChanged events of
 * instance-lifecycle (compute at dph_total, storage at the disk's rate). The billing meter charges the
 * part of each period after the instance's last charge (ledger_entries.period_end).
 */
export const billingPeriods: Migration = {
  id: '0006-billing-periods',
  replaces: '0007-billing-periods',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.billing_periods (
        instance_id INTEGER NOT NULL,
        started_at TIMESTAMPTZ NOT NULL,
        ended_at TIMESTAMPTZ,
        renter_id INTEGER NOT NULL,
        host_id INTEGER NOT NULL,
        machine_id INTEGER NOT NULL,
        kind TEXT NOT NULL,
        rate_per_hour DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (instance_id, started_at)
      )`);
    await sql.execute(
      `CREATE INDEX billing_periods_open ON ${s}.billing_periods (instance_id) WHERE ended_at IS NULL`,
    );
    await sql.execute(
      `CREATE INDEX ledger_entries_by_instance ON ${s}.ledger_entries (instance_id, period_end) WHERE instance_id IS NOT NULL`,
    );
  },
};
