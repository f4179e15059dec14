import { type Migration, replayProjection } from '@rigmarket/event-sourcing';
import { instanceChargedUntilProjection } from '../read-models/instance-charged-until/projection';

/**
 * Where each instance's charges end (read-models/instance-charged-until). The billing meter read it before as
 * max(period_end) over every charge ever made, a scan that grew with the ledger's history (a charge per
 * instance per minute). Filled by replaying the ledger's charges.
 */
export const instanceChargedUntil: Migration = {
  id: '0017-instance-charged-until',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.instance_charged_until (
        instance_id INTEGER PRIMARY KEY,
        until TIMESTAMPTZ NOT NULL
      )`);
    await replayProjection(sql, s, instanceChargedUntilProjection);
  },
};
