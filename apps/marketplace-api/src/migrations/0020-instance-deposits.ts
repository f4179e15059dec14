import type { Migration } from '@rigmarket/event-sourcing';

/**
 * Reserved instances (`vastai prepay instance`, `show deposit`): each prepaid instance's deposit, from the
 * ledger's InstancePrepaid, DepositDrawn and DepositRefunded (read-models/instance-deposits).
 */
export const instanceDeposits: Migration = {
  id: '0020-instance-deposits',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.instance_deposits (
        instance_id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL,
        deposit NUMERIC(20, 6) NOT NULL,
        prepaid NUMERIC(20, 6) NOT NULL,
        drawn NUMERIC(20, 6) NOT NULL,
        refunded NUMERIC(20, 6) NOT NULL,
        closed BOOLEAN NOT NULL DEFAULT FALSE
      )`);
  },
};
