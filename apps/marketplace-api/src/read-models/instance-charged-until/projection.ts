import type { AccountCharged } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/**
 * The moment up to which each instance has been charged: the billing meter charges from there. One row per
 * instance, so a billing run costs the same however long the ledger's history (before, it took the max over
 * every charge ever made). Charges may arrive in any order; the latest end wins.
 */
export const instanceChargedUntilProjection = defineProjection<AccountCharged>({
  name: 'instance_charged_until',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'ledger' }],
  tables: [`${SCHEMA}.instance_charged_until`],
  eventTypes: ['AccountCharged'],
  async apply(sql, event) {
    await sql.execute(
      `INSERT INTO ${SCHEMA}.instance_charged_until (instance_id, until) VALUES ($1, $2)
       ON CONFLICT (instance_id) DO UPDATE SET until = GREATEST(${SCHEMA}.instance_charged_until.until, EXCLUDED.until)`,
      [event.data.instanceId, event.data.periodEnd],
    );
  },
  /** A billing run's charges: one upsert of each instance's latest end. */
  async applyBatch(sql, events) {
    await sql.execute(
      `INSERT INTO ${SCHEMA}.instance_charged_until (instance_id, until)
       SELECT c.instance_id, max(c.until) FROM unnest($1::bigint[], $2::timestamptz[]) AS c (instance_id, until)
        GROUP BY c.instance_id
       ON CONFLICT (instance_id) DO UPDATE SET until = GREATEST(${SCHEMA}.instance_charged_until.until, EXCLUDED.until)`,
      [events.map((e) => e.data.instanceId), events.map((e) => e.data.periodEnd)],
    );
  },
});
