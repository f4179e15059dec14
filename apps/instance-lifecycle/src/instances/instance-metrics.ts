import { scrapeGauge } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../schema';

/**
 * rigmarket_instances{state}: instances not destroyed, by their last reported status (`creating` before the
 * host reported any), read from the instances read model when scraped.
 */
export const instancesByState = scrapeGauge({
  name: 'rigmarket_instances',
  help: 'Instances not destroyed, by last reported status (creating: none reported yet)',
  labelNames: ['context', 'state'],
  compute: async (c) => {
    if (c.schema !== SCHEMA) return [];
    const rows = await c.db.query<{ state: string; n: string }>(
      `SELECT COALESCE(actual_status, 'creating') AS state, count(*)::text AS n
         FROM ${c.schema}.instances WHERE NOT destroyed GROUP BY 1`,
    );
    return rows.map((r) => ({ labels: { context: c.context, state: r.state }, value: Number(r.n) }));
  },
});
