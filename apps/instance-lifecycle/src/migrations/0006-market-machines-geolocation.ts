import type { Migration } from '@rigmarket/event-sourcing';

/** Where a machine is (MachineRegistered's geolocation), for `launch instance -r REGION`. */
export const marketMachinesGeolocation: Migration = {
  id: '0006-market-machines-geolocation',
  replaces: '0007-market-machines-geolocation',
  async up(sql, s) {
    await sql.execute(`ALTER TABLE ${s}.market_machines ADD COLUMN geolocation TEXT`);
  },
};
