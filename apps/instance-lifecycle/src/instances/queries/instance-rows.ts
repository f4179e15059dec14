import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';
import { type MaintenanceRow, type SyncRow, withNotices } from '../sync-maintenance-notices';
import { type InstanceRowRecord, type InstanceView, instanceView } from './instance-view';

/**
 * An instance row as read for its view, with what the other read models add to it: the machine's columns
 * (market_machines), its next maintenance window (machine_maintenance, prefixed `mw_`) and the instance's
 * remote sync (instance_syncs, prefixed `sync_`).
 */
export type JoinedInstanceRow = InstanceRowRecord & {
  [K in keyof MaintenanceRow as `mw_${K}`]: MaintenanceRow[K] | null;
} & { [K in keyof SyncRow as `sync_${K}`]: SyncRow[K] | null };

export interface InstanceSelection {
  /** Conditions on `${SCHEMA}.instances` (unaliased: a condition may name `${SCHEMA}.instances.machine_id`). */
  where: string;
  params: unknown[];
  orderBy: string;
  limit: number;
  offset?: number;
}

/**
 * One query for a page of instance rows and everything their views show (in place of the row query plus
 * one for maintenance windows and one for syncs, and of three sub-selects per row for the machine's
 * columns): the page is chosen on `instances` alone, then joined. The rows come back as one JSON array
 * (one text value): decoding a hundred wide rows field by field cost more than the query itself in the
 * embedded database, and JSON.parse reads them at once. Parameters: the selection's, then now.
 */
export function joinedInstancesSql(
  selection: InstanceSelection,
  nowSeconds: number,
): { sql: string; params: unknown[] } {
  const params = [...selection.params, nowSeconds];
  const now = `$${params.length}`;
  const sql = `SELECT COALESCE(json_agg(t ORDER BY t.page_order), '[]')::text AS rows FROM (
    SELECT i.*, COALESCE(mm.verification, 'unverified') AS verification,
      mm.gpu_ram AS machine_gpu_ram, mm.public_ipaddr AS machine_public_ipaddr,
      (mm.ask->>'endDate')::double precision AS machine_end_date,
      mw.machine_id AS mw_machine_id, mw.start_time AS mw_start_time, mw.end_time AS mw_end_time,
      mw.duration_hours AS mw_duration_hours, mw.category AS mw_category,
      sy.instance_id AS sync_instance_id, sy.job_id AS sync_job_id, sy.kind AS sync_kind,
      sy.src_instance_id AS sync_src_instance_id, sy.transfer AS sync_transfer, sy.status AS sync_status,
      sy.bytes_copied AS sync_bytes_copied, sy.total_bytes AS sync_total_bytes, sy.reason AS sync_reason,
      sy.updated_at AS sync_updated_at
    FROM (
      SELECT ${SCHEMA}.instances.*, row_number() OVER (ORDER BY ${selection.orderBy}) AS page_order
        FROM ${SCHEMA}.instances WHERE ${selection.where}
        ORDER BY ${selection.orderBy} LIMIT ${selection.limit}${selection.offset ? ` OFFSET ${selection.offset}` : ''}
    ) i
    LEFT JOIN ${SCHEMA}.market_machines mm ON mm.machine_id = i.machine_id
    LEFT JOIN LATERAL (
      SELECT w.machine_id, w.start_time, w.end_time, w.duration_hours, w.category
        FROM ${SCHEMA}.machine_maintenance w
       WHERE w.machine_id = i.machine_id AND w.end_time > ${now}
       ORDER BY w.start_time LIMIT 1
    ) mw ON TRUE
    LEFT JOIN ${SCHEMA}.instance_syncs sy ON sy.instance_id = i.instance_id
  ) t`;
  return { sql, params };
}

/** Reads the selection's rows in one query and maps them to views (with their notices). */
export async function readInstanceViews(
  sql: Sql,
  selection: InstanceSelection,
  now: Date,
): Promise<{ rows: JoinedInstanceRow[]; views: InstanceView[] }> {
  const query = joinedInstancesSql(selection, now.getTime() / 1000);
  const [result] = await sql.query<{ rows: string }>(query.sql, query.params);
  const rows = JSON.parse(result?.rows ?? '[]') as JoinedInstanceRow[];
  const views = rows.map((row) =>
    withNotices(
      instanceView(row),
      row.mw_machine_id === null
        ? undefined
        : {
            machine_id: row.mw_machine_id,
            start_time: row.mw_start_time!,
            end_time: row.mw_end_time!,
            duration_hours: row.mw_duration_hours!,
            category: row.mw_category!,
          },
      row.sync_instance_id === null
        ? undefined
        : {
            instance_id: row.sync_instance_id,
            job_id: row.sync_job_id!,
            kind: row.sync_kind!,
            src_instance_id: row.sync_src_instance_id,
            transfer: row.sync_transfer,
            status: row.sync_status!,
            bytes_copied: row.sync_bytes_copied!,
            total_bytes: row.sync_total_bytes,
            reason: row.sync_reason,
            updated_at: row.sync_updated_at!,
          },
      now,
    ),
  );
  return { rows, views };
}
