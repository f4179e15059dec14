import type { Migration } from '@rigmarket/event-sourcing';

/**
 * Heartbeats leave the machine streams: each is a row of liveness (one per machine and 60-second slot,
 * kept for the 24 h reliability window), and the stream gets an event only when the reliability changes.
 * Seeded from the heartbeat events of the last 24 h, so reliabilities carry on across the upgrade.
 */
export const machineLiveness: Migration = {
  id: '0014-machine-liveness',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.machine_liveness (
        machine_id INTEGER NOT NULL,
        slot BIGINT NOT NULL,
        PRIMARY KEY (machine_id, slot)
      )`);
    await sql.execute(
      `INSERT INTO ${s}.machine_liveness (machine_id, slot)
       SELECT DISTINCT (data->>'machineId')::int, floor(extract(epoch FROM (data->>'at')::timestamptz) / 60)::bigint
         FROM ${s}.events
        WHERE type = 'MachineHeartbeat' AND (data->>'at')::timestamptz > now() - interval '24 hours'
       ON CONFLICT DO NOTHING`,
    );
  },
};
