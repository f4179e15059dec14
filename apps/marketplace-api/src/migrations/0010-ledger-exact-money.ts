import { type Migration, replayProjection } from '@rigmarket/event-sourcing';
import { ledgerProjection } from '../read-models/ledger/projection';

/**
 * Money columns become exact: NUMERIC(20, 6) dollars (integer micros on the events). The old DOUBLE PRECISION
 * rows are replaced by a replay of the ledger, whose version 1 events are upcast to micros (an amount beyond
 * the limits is voided, see contracts' money.ts), so nothing of the old float sums survives.
 */
export const ledgerExactMoney: Migration = {
  id: '0010-ledger-exact-money',
  async up(sql, s) {
    await sql.execute(`DELETE FROM ${s}.ledger_entries`);
    await sql.execute(`DELETE FROM ${s}.balances`);
    await sql.execute(`ALTER TABLE ${s}.ledger_entries ALTER COLUMN amount TYPE NUMERIC(20, 6)`);
    await sql.execute(`ALTER TABLE ${s}.balances ALTER COLUMN balance TYPE NUMERIC(20, 6)`);
    await replayProjection(sql, s, ledgerProjection);
  },
};
