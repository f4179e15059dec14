import type { Migration } from '@rigmarket/event-sourcing';

/**
 * The billed rate becomes integer micro-dollars per hour (InstanceBillingChanged version 2), like every other
 * amount: the DOUBLE PRECISION dollars column is converted in place with the rounding of the version 1
 * upcaster (nearest micro-dollar), so a rebuild from the events gives the same rows.
 */
export const billingRateMicros: Migration = {
  id: '0016-billing-rate-micros',
  async up(sql, s) {
    await sql.execute(`ALTER TABLE ${s}.billing_periods RENAME COLUMN rate_per_hour TO rate_per_hour_micros`);
    await sql.execute(
      `ALTER TABLE ${s}.billing_periods ALTER COLUMN rate_per_hour_micros TYPE BIGINT USING round(rate_per_hour_micros * 1000000)::bigint`,
    );
  },
};
