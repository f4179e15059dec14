import type { Migration } from '@rigmarket/event-sourcing';

/** When each machine last sent a heartbeat (machines read model), so the sweep finds the silent ones. */
export const machineLastHeartbeat: Migration = {
  id: '0009-machine-last-heartbeat',
  replaces: '0009-machine-last-heartbeat',
  async up(sql, s) {
    await sql.execute(`ALTER TABLE ${s}.machines ADD COLUMN last_heartbeat_at TIMESTAMPTZ`);
  },
};
