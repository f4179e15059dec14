import type { Migration } from '@rigmarket/event-sourcing';

/**
 * A host earns each charge once (HostEarningsReactor runs at least once). Whether a charge was already
 * earned is looked up in the event store, in the command's transaction, instead of being kept in the
 * ledger's folded state: that set grew with every earning, so every earning command (and every snapshot)
 * would have cost more the longer the host had earned. The unique index makes the look-up one index probe,
 * and makes a second earning of the same charge fail its append even if two ran at once.
 */
export const ledgerEarnedCharges: Migration = {
  id: '0011-ledger-earned-charges',
  replaces: '0011-ledger-earned-charges',
  async up(sql, s) {
    await sql.execute(
      `CREATE UNIQUE INDEX ${s}_events_earned_charge ON ${s}.events ((data->>'chargeId')) WHERE type = 'HostEarned'`,
    );
  },
};
