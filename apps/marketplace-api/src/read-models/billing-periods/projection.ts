import type { InstanceBillingChanged } from '@rigmarket/contracts';
import { type EnvelopeOf, type Sql, defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** Ledger kinds per billing class ('none' opens no period). */
const CHARGE_KIND = { compute: 'gpu', storage: 'storage' } as const;

type BillingChange = EnvelopeOf<InstanceBillingChanged>;

export const billingPeriodsProjection = defineProjection<InstanceBillingChanged>({
  name: 'billing_periods',
  version: 1,
  sources: [{ context: 'instance', streamType: 'instance' }],
  tables: [`${SCHEMA}.billing_periods`],
  eventTypes: ['InstanceBillingChanged'],
  async apply(sql, event) {
    await applyChanges(sql, [event]);
  },
  // A delivery of many rents: one statement for all their instances. An instance's changes apply in order,
  // so its second change in the batch goes in the next statement (rounds: the first change of each
  // instance, then the second, ...); changes of different instances touch different rows.
  async applyBatch(sql, events) {
    for (const round of rounds(events)) await applyChanges(sql, round);
  },
});

/** The events in rounds in which each instance appears at most once, each instance's in order. */
function rounds(events: readonly BillingChange[]): BillingChange[][] {
  const result: BillingChange[][] = [];
  const seen = new Map<number, number>();
  for (const event of events) {
    const round = seen.get(event.data.instanceId) ?? 0;
    seen.set(event.data.instanceId, round + 1);
    (result[round] ??= []).push(event);
  }
  return result;
}

/**
 * Applies the billing changes of distinct instances in one statement: each ends its instance's open period
 * and, unless it is 'none', starts one. A period that started at the change's instant is left out of the end
 * and found by the INSERT (a row may change once per statement): its DO UPDATE reopens it with the new kind
 * and rate, as ending it first and then reopening it did. 'none' ends it too.
 */
async function applyChanges(sql: Sql, changes: readonly BillingChange[]): Promise<void> {
  const t = `${SCHEMA}.billing_periods`;
  await sql.execute(
    `WITH c AS (
       SELECT * FROM unnest($1::int[], $2::timestamptz[], $3::int[], $4::int[], $5::int[], $6::text[], $7::bigint[])
         AS c (instance_id, at, renter_id, host_id, machine_id, kind, rate_per_hour_micros)
     ), ended AS (
       UPDATE ${t} p SET ended_at = c.at FROM c
        WHERE p.instance_id = c.instance_id AND p.ended_at IS NULL AND (c.kind IS NULL OR p.started_at <> c.at)
     )
     INSERT INTO ${t} (instance_id, started_at, renter_id, host_id, machine_id, kind, rate_per_hour_micros)
     SELECT instance_id, at, renter_id, host_id, machine_id, kind, rate_per_hour_micros FROM c WHERE kind IS NOT NULL
     ON CONFLICT (instance_id, started_at) DO UPDATE SET kind = EXCLUDED.kind, rate_per_hour_micros = EXCLUDED.rate_per_hour_micros, ended_at = NULL`,
    [
      changes.map((e) => e.data.instanceId),
      changes.map((e) => e.data.at),
      changes.map((e) => e.data.renter),
      changes.map((e) => e.data.hostId),
      changes.map((e) => e.data.machineId),
      changes.map((e) => (e.data.billing === 'none' ? null : CHARGE_KIND[e.data.billing])),
      changes.map((e) => (e.data.billing === 'none' ? null : e.data.ratePerHourMicros)),
    ],
  );
}
