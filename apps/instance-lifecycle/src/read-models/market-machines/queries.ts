import type { MachineAsk } from '@rigmarket/contracts';
import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** An instance's machine verification, as a column expression over `instances` (no alias). */
export const INSTANCE_VERIFICATION = `COALESCE((SELECT mm.verification FROM ${SCHEMA}.market_machines mm WHERE mm.machine_id = ${SCHEMA}.instances.machine_id), 'unverified')`;

export interface MachineRecord {
  machineId: number;
  ownerId: number;
  gpuName: string;
  numGpus: number;
  gpuRam: number;
  publicIpaddr: string | null;
  listed: boolean;
  ask: MachineAsk | null;
  vmsEnabled: boolean;
}

const json = <T>(value: unknown): T => (typeof value === 'string' ? (JSON.parse(value) as T) : (value as T));

/** A row of market_machines (as selected, or as its row_to_json). */
export interface MachineRow {
  machine_id: number;
  owner_id: number;
  gpu_name: string;
  num_gpus: number;
  gpu_ram: number;
  public_ipaddr: string | null;
  listed: boolean;
  ask: unknown;
  vms_enabled: boolean;
}

export async function findMachine(sql: Sql, machineId: number): Promise<MachineRecord | null> {
  const rows = await sql.query<MachineRow>(`SELECT * FROM ${SCHEMA}.market_machines WHERE machine_id = $1`, [
    machineId,
  ]);
  return rows[0] ? machineRecord(rows[0]) : null;
}

export function machineRecord(row: MachineRow): MachineRecord {
  return {
    machineId: Number(row.machine_id),
    ownerId: Number(row.owner_id),
    gpuName: row.gpu_name,
    numGpus: Number(row.num_gpus),
    gpuRam: Number(row.gpu_ram),
    publicIpaddr: row.public_ipaddr,
    listed: row.listed,
    ask: row.ask === null ? null : json<MachineAsk>(row.ask),
    vmsEnabled: row.vms_enabled === true,
  };
}
