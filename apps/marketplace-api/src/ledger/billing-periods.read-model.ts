import type { EventEnvelope, InstanceEvent } from '@rigmarket/contracts';
import type { Migration, Projection } from '@rigmarket/event-sourcing';

const SCHEMA = 'marketplace';

/**
 * What each instance cost when: one row per period between two InstanceBillingChanged events of
 * instance-lifecycle (compute at dph_total, storage at the disk's rate). The billing meter charges the
 * part of each period after the instance's last charge (ledger_entries.period_end).
 */
export const billingPeriodsMigration: Migration = {
  id: '0007-billing-periods',
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

/** Ledger kinds per billing class ('none' opens no period). */
const CHARGE_KIND = { compute: 'gpu', storage: 'storage' } as const;

export const billingPeriodsProjection: Projection = {
  name: 'billing_periods',
  version: 1,
  sources: [{ context: 'instance', streamType: 'instance' }],
  tables: [`${SCHEMA}.billing_periods`],
  async apply(sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as InstanceEvent;
    if (event.type !== 'InstanceBillingChanged') return;
    const { instanceId, renter, hostId, machineId, billing, ratePerHour, at } = event.data;
    await sql.execute(
      `UPDATE ${SCHEMA}.billing_periods SET ended_at = $2 WHERE instance_id = $1 AND ended_at IS NULL`,
      [instanceId, at],
    );
    if (billing === 'none') return;
    await sql.execute(
      `INSERT INTO ${SCHEMA}.billing_periods (instance_id, started_at, renter_id, host_id, machine_id, kind, rate_per_hour)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (instance_id, started_at) DO UPDATE SET kind = EXCLUDED.kind, rate_per_hour = EXCLUDED.rate_per_hour, ended_at = NULL`,
      [instanceId, at, renter, hostId, machineId, CHARGE_KIND[billing], ratePerHour],
    );
  },
};
