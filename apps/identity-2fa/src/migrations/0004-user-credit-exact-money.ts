import { type Migration, replayProjection } from '@rigmarket/event-sourcing';
import { userCreditProjection } from '../read-models/user-credit/projection';

/**
 * The credit column was summed from float dollars and left out hosts' earnings, so it disagreed with
 * marketplace.balances; it is now NUMERIC(20, 6) summed from the ledger's integer micros by the same rule
 * (ledgerDeltaMicros) as marketplace's balances, and replayed from the ledger once.
 */
export const userCreditExactMoney: Migration = {
  id: '0004-user-credit-exact-money',
  replaces: '0005-user-credit-exact-money',
  async up(sql, s) {
    await sql.execute(`DELETE FROM ${s}.user_credit`);
    await sql.execute(`ALTER TABLE ${s}.user_credit ALTER COLUMN credit TYPE NUMERIC(20, 6)`);
    await replayProjection(sql, s, userCreditProjection);
  },
};
