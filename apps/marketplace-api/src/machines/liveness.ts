import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../schema';
import { HEARTBEAT_INTERVAL_S, RELIABILITY_WINDOW_S, slotOf } from './machine.decider';

/**
 * A machine's liveness: the 60-second slots in which its host sent a heartbeat, kept for the rolling
 * reliability window (`machine_liveness`). Heartbeats are not events: only the reliability they yield is,
 * when it changes (MachineReliabilityChanged).
 */

/** Records a heartbeat at `now` and answers the slots seen in the window (older ones are dropped). */
export async function recordBeat(sql: Sql, machineId: number, nowSeconds: number): Promise<number[]> {
  await sql.execute(
    `INSERT INTO ${SCHEMA}.machine_liveness (machine_id, slot) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
    [machineId, slotOf(nowSeconds)],
  );
  return beatSlots(sql, machineId, nowSeconds);
}

/** The slots with a heartbeat inside the window ending at `now`; older ones are dropped. */
export async function beatSlots(sql: Sql, machineId: number, nowSeconds: number): Promise<number[]> {
  const oldest = slotOf(nowSeconds - RELIABILITY_WINDOW_S);
  await sql.execute(`DELETE FROM ${SCHEMA}.machine_liveness WHERE machine_id = $1 AND slot < $2`, [
    machineId,
    oldest,
  ]);
  const rows = await sql.query<{ slot: string }>(
    `SELECT slot::text AS slot FROM ${SCHEMA}.machine_liveness WHERE machine_id = $1 ORDER BY slot`,
    [machineId],
  );
  return rows.map((r) => Number(r.slot));
}

/** Machines with a reliability above 0 and no heartbeat in the last two intervals (the sweep's work). */
export async function silentMachines(sql: Sql, nowSeconds: number): Promise<number[]> {
  const rows = await sql.query<{ machine_id: number }>(
    `SELECT m.machine_id FROM ${SCHEMA}.machines m
      WHERE m.reliability > 0
        AND NOT EXISTS (SELECT 1 FROM ${SCHEMA}.machine_liveness l WHERE l.machine_id = m.machine_id AND l.slot >= $1)
      ORDER BY m.machine_id`,
    [slotOf(nowSeconds - 2 * HEARTBEAT_INTERVAL_S)],
  );
  return rows.map((r) => Number(r.machine_id));
}
