import type { InstanceBillingChanged } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** Ledger kinds per billing class ('none' opens no period). */
const CHARGE_KIND = { compute: 'gpu', storage: 'storage' } as const;

export const billingPeriodsProjection = defineProjection<InstanceBillingChanged>({
  name: 'billing_periods',
  version: 1,
  sources: [{ context: 'instance', streamType: 'instance' }],
  tables: [`${SCHEMA}.billing_periods`],
  eventTypes: ['InstanceBillingChanged'],
  async apply(sql, event) {
    if (event.type !== 'InstanceBillingChanged') return;
    const { instanceId, renter, hostId, machineId, billing, ratePerHourMicros, at } = event.data;
    const end = `UPDATE ${SCHEMA}.billing_periods SET ended_at = $2 WHERE instance_id = $1 AND ended_at IS NULL`;
    if (billing === 'none') {
      await sql.execute(end, [instanceId, at]);
      return;
    }
    // The open period ends and the new one starts in one statement. A period that started at the same
    // instant is the one the INSERT finds (a row may change once per statement): left to its DO UPDATE,
    // which reopens it with the new kind and rate, as ending it first and then reopening it did.
    await sql.execute(
      `WITH ended AS (${end} AND started_at <> $2)
       INSERT INTO ${SCHEMA}.billing_periods (instance_id, started_at, renter_id, host_id, machine_id, kind, rate_per_hour_micros)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (instance_id, started_at) DO UPDATE SET kind = EXCLUDED.kind, rate_per_hour_micros = EXCLUDED.rate_per_hour_micros, ended_at = NULL`,
      [instanceId, at, renter, hostId, machineId, CHARGE_KIND[billing], ratePerHourMicros],
    );
  },
});
