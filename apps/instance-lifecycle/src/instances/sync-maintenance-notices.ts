import { ApiError, type MaintenanceWindowColumns, type SyncKind } from '@rigmarket/contracts';
import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../schema';

/**
 * What renters see of sync-maintenance on their instances, from its public events over the transport:
 * the machine's upcoming maintenance window (`upcoming_maintenance` on the instance row) and the progress
 * of a remote sync into the instance (its `status_msg`, and `remote_sync`). Kept apart from the
 * instances read model: two tables (read-models/machine-maintenance, read-models/instance-syncs), one
 * projection each, joined when instances are read.
 */

export interface SyncNotice {
  jobId: number;
  kind: SyncKind;
  srcInstanceId: number | null;
  transfer: string | null;
  status: 'requested' | 'running' | 'completed' | 'failed' | 'canceled';
  bytesCopied: number;
  totalBytes: number | null;
  reason: string | null;
}

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

/** The status bar line of a sync (pure; the instance row shows it in status_msg). */
export function syncStatusMsg(sync: SyncNotice): string {
  const what =
    sync.kind === 'rclone'
      ? `Cloud copy (${sync.transfer ?? 'cloud'})`
      : `Remote copy from instance ${sync.srcInstanceId ?? '?'}`;
  switch (sync.status) {
    case 'requested':
      return `${what}: queued`;
    case 'running': {
      if (sync.totalBytes === null || sync.totalBytes <= 0) return `${what}: ${mb(sync.bytesCopied)} copied`;
      const percent = Math.min(100, Math.floor((sync.bytesCopied / sync.totalBytes) * 100));
      return `${what}: ${mb(sync.bytesCopied)} of ${mb(sync.totalBytes)} (${percent}%)`;
    }
    case 'completed':
      // The CLI tells the renter to look for 'Cloud Copy Operation Finished' in the status bar.
      return sync.kind === 'rclone'
        ? `Cloud Copy Operation Finished: ${what}, ${mb(sync.bytesCopied)} copied`
        : `${what}: complete, ${mb(sync.bytesCopied)} copied`;
    case 'failed':
      return `${what} failed: ${sync.reason ?? 'unknown reason'}`;
    case 'canceled':
      return `${what}: canceled at ${mb(sync.bytesCopied)}; a canceled copy does not resume, start it again to copy from the beginning`;
  }
}

/** A finished sync's last line stays in status_msg this long, then the instance's own message returns. */
export const FINISHED_SYNC_NOTICE_MS = 3600 * 1000;

interface Decorated {
  id: number;
  machine_id: number;
  status_msg: string | null;
}

/** The machine's next window that has not ended (machine_maintenance). */
export type MaintenanceRow = MaintenanceWindowColumns;

/** The instance's remote sync (instance_syncs). */
export interface SyncRow {
  instance_id: number;
  job_id: number;
  kind: SyncKind;
  src_instance_id: number | null;
  transfer: string | null;
  status: SyncNotice['status'];
  bytes_copied: number;
  total_bytes: number | null;
  reason: string | null;
  updated_at: string | Date;
}

/**
 * Adds `upcoming_maintenance` (the machine's next window that has not ended, or null) and `remote_sync` to
 * an instance's view, and puts an active (or recently finished) sync's line in status_msg. Pure: the rows
 * are read with the instance's (queries/instance-rows.ts).
 */
export function withNotices<V extends Decorated>(
  view: V,
  w: MaintenanceRow | undefined,
  s: SyncRow | undefined,
  now: Date,
) {
  const notice: SyncNotice | null = s
    ? {
        jobId: Number(s.job_id),
        kind: s.kind,
        srcInstanceId: s.src_instance_id === null ? null : Number(s.src_instance_id),
        transfer: s.transfer,
        status: s.status,
        bytesCopied: Number(s.bytes_copied),
        totalBytes: s.total_bytes === null ? null : Number(s.total_bytes),
        reason: s.reason,
      }
    : null;
  const active = notice !== null && (notice.status === 'requested' || notice.status === 'running');
  const recent =
    s !== undefined && now.getTime() - new Date(s.updated_at).getTime() < FINISHED_SYNC_NOTICE_MS;
  return {
    ...view,
    status_msg: notice && (active || recent) ? syncStatusMsg(notice) : view.status_msg,
    upcoming_maintenance: w
      ? {
          machine_id: Number(w.machine_id),
          start_time: Number(w.start_time),
          end_time: Number(w.end_time),
          duration_hours: Number(w.duration_hours),
          maintenance_category: w.category,
        }
      : null,
    remote_sync: notice
      ? {
          job_id: notice.jobId,
          kind: notice.kind,
          status: notice.status,
          bytes_copied: notice.bytesCopied,
          total_bytes: notice.totalBytes,
          msg: syncStatusMsg(notice),
        }
      : null,
  };
}

/** The end (ISO) of the maintenance window the machine is in now, or null. */
export async function maintenanceUntil(sql: Sql, machineId: number, now: Date): Promise<string | null> {
  const rows = await sql.query<{ end_time: number | null }>(
    `SELECT ${maintenanceEndSql('$1', '$2')} AS end_time`,
    [machineId, now.getTime() / 1000],
  );
  return maintenanceEnd(rows[0]?.end_time ?? null);
}

/** A maintenance window's end_time (seconds) as the ISO time the refusals quote. */
export const maintenanceEnd = (endTime: number | string | null): string | null =>
  endTime === null ? null : new Date(Number(endTime) * 1000).toISOString();

/** The end_time of the window a machine is in at a time (seconds), as a scalar subquery: its parameters' names. */
export const maintenanceEndSql = (machine: string, now: string): string =>
  `(SELECT end_time FROM ${SCHEMA}.machine_maintenance WHERE machine_id = ${machine} AND start_time <= ${now} AND end_time > ${now} ORDER BY end_time DESC LIMIT 1)`;

/**
 * A machine in maintenance now cannot be rented (the offer search hides it; this refuses an accept by
 * offer id). Rentals before a window are accepted: the window is on the instance row for the renter.
 */
export async function refuseDuringMaintenance(
  sql: Sql,
  machineId: number,
  offerId: number,
  now: Date,
): Promise<void> {
  refuseInMaintenance(await maintenanceUntil(sql, machineId, now), machineId, offerId);
}

/** refuseDuringMaintenance's decision, given the window's end (null: none now). */
export function refuseInMaintenance(until: string | null, machineId: number, offerId: number): void {
  if (until !== null)
    throw ApiError.conflict(
      `Offer ${offerId} is not rentable: machine ${machineId} is in maintenance until ${until}`,
      'offer_unavailable',
    );
}
