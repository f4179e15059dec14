import type { MachineAsk, MachineHardware, MachineVerification } from '@rigmarket/contracts';
import type { Sql } from '@rigmarket/event-sourcing';
import { type MachineForOffers, OFFER_COLUMNS, type OfferRow, offerRowsFor } from '../../offers/offer-rows';
import { SCHEMA } from '../../schema';

interface MachineRow {
  machine_id: number;
  owner_id: number;
  hardware: MachineHardware | string | null;
  ask: MachineAsk | string | null;
  listed: boolean;
  listed_at: Date | string | null;
  verification: MachineVerification;
  reliability: number;
  dlperf: number;
  tflops: number;
  gpus_allocated: number;
}

const json = <T>(value: T | string | null): T | null =>
  typeof value === 'string' ? (JSON.parse(value) as T) : value;

export function machineForOffers(row: MachineRow): MachineForOffers | null {
  const hardware = json(row.hardware);
  if (!hardware) return null;
  return {
    machineId: Number(row.machine_id),
    ownerId: Number(row.owner_id),
    hardware,
    ask: json(row.ask),
    listed: row.listed,
    listedAt: row.listed_at ? new Date(row.listed_at).getTime() / 1000 : null,
    verification: row.verification,
    reliability: Number(row.reliability),
    dlperf: Number(row.dlperf),
    tflops: Number(row.tflops),
    gpusAllocated: Number(row.gpus_allocated),
  };
}

/** Multi-row INSERT with parameters only (500 rows a statement keeps under the 65535-parameter cap). */
export async function insertOfferRows(sql: Sql, rows: readonly OfferRow[], schema = SCHEMA): Promise<void> {
  const width = OFFER_COLUMNS.length;
  for (let start = 0; start < rows.length; start += 500) {
    const batch = rows.slice(start, start + 500);
    const params: unknown[] = [];
    const tuples = batch.map((row, i) => {
      for (const column of OFFER_COLUMNS) params.push(row[column]);
      return `(${OFFER_COLUMNS.map((_, j) => `$${i * width + j + 1}`).join(', ')})`;
    });
    await sql.execute(
      `INSERT INTO ${schema}.offers (${OFFER_COLUMNS.join(', ')}) VALUES ${tuples.join(', ')}`,
      params,
    );
  }
}

/**
 * GPUs held by live instances (instance_allocations, kept by the machines projection from instance-lifecycle's
 * instance events). Computed when read (the stored machines.gpus_allocated column of 0002 is not used).
 */
export const GPUS_ALLOCATED = `(SELECT COALESCE(SUM(ia.num_gpus), 0) FROM ${SCHEMA}.instance_allocations ia WHERE ia.machine_id = m.machine_id AND ia.held) AS gpus_allocated`;

/**
 * Replaces the offer rows of the machines `machineIds` (a delivery's machines at once: the same statements
 * for one machine or many); free GPUs = num_gpus - GPUS_ALLOCATED. The old rows are deleted by the statement
 * that reads the machines (a data-modifying WITH runs to its end whether read or not), so the new ones are
 * inserted after it. A machine gone or without hardware is left with none.
 */
export async function refreshOffers(sql: Sql, machineIds: ReadonlySet<number>): Promise<void> {
  if (machineIds.size === 0) return;
  const rows = await sql.query<MachineRow>(
    `WITH gone AS (DELETE FROM ${SCHEMA}.offers WHERE machine_id = ANY($1::int[]))
     SELECT machine_id, owner_id, hardware, ask, listed, listed_at, verification, reliability, dlperf, tflops, ${GPUS_ALLOCATED}
       FROM ${SCHEMA}.machines m WHERE machine_id = ANY($1::int[]) ORDER BY machine_id`,
    [[...machineIds]],
  );
  const machines = rows.map(machineForOffers).filter((m): m is MachineForOffers => m !== null);
  await insertOfferRows(sql, machines.flatMap(offerRowsFor));
}
