import type { Migration } from '@rigmarket/event-sourcing';

/** The machine's verification, which the real CLI filters instances by (`show instances --verification`). */
export const marketMachinesVerification: Migration = {
  id: '0004-market-machines-verification',
  replaces: '0005-market-machines-verification',
  async up(sql, s) {
    await sql.execute(
      `ALTER TABLE ${s}.market_machines ADD COLUMN verification TEXT NOT NULL DEFAULT 'unverified'`,
    );
  },
};
