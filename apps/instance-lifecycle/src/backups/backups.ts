import type { EventMetadata } from '@rigmarket/contracts';
import type { CommandBody, ContextRuntime, Sql } from '@rigmarket/event-sourcing';
import { decideIn } from '../instances/instance-commands';
import { SCHEMA } from '../schema';
import {
  type BackupFile,
  type InstanceBackupCommand,
  instanceBackupDecider,
  instanceBackupStreamId,
} from './instance-backup.decider';

export const INSTANCE_BACKUP_INFO = "the container's changes to its image (upper/); volumes are not included";

export interface BackupRow {
  backupId: number;
  contractId: number;
  ownerId: number;
  machineId: number;
  kind: 'instance' | 'volume';
  status: 'pending' | 'success' | 'error';
  info: string;
  files: BackupFile[];
  requestedAt: Date;
}

/**
 * In the transaction that removes an instance its renter did not destroy: a backup of it is requested on
 * its own stream, and its host is told to take it (a `backup` host command, written before the instance's
 * destroy, which therefore waits for it: docs/adr/0012-host-commands.md).
 */
export async function requestInstanceBackupIn(
  runtime: ContextRuntime,
  sql: Sql,
  instance: { contractId: number; ownerId: number; machineId: number },
  metadata: EventMetadata,
  now: Date,
): Promise<number> {
  const [row] = await sql.query<{ id: string }>(
    `SELECT nextval('${SCHEMA}.instance_backup_ids')::text AS id`,
  );
  const backupId = Number(row!.id);
  const { envelopes } = await decideIn(
    runtime,
    sql,
    instanceBackupStreamId(backupId),
    instanceBackupDecider,
    { type: 'RequestBackup', backupId, kind: 'instance', info: INSTANCE_BACKUP_INFO, ...instance },
    metadata,
    now,
  );
  await sql.execute(
    `INSERT INTO ${SCHEMA}.host_commands (instance_id, machine_id, kind, event_id) VALUES ($1, $2, 'backup', $3)`,
    [instance.contractId, instance.machineId, envelopes[0]?.eventId ?? ''],
  );
  return backupId;
}

/** One command on a backup's stream (the platform's own: no user request behind it but the metadata's). */
export function runBackupCommand(
  runtime: ContextRuntime,
  backupId: number,
  command: CommandBody<InstanceBackupCommand>,
  metadata: EventMetadata = { correlationId: `backup-${backupId}`, causationId: `backup-${backupId}` },
) {
  return runtime.runner.run(instanceBackupStreamId(backupId), instanceBackupDecider, command, metadata);
}

interface Row {
  backup_id: number;
  contract_id: number;
  owner_id: number;
  machine_id: number;
  kind: string;
  status: string;
  info: string;
  files: BackupFile[] | string;
  requested_at: string | Date;
}

const COLUMNS = 'backup_id, contract_id, owner_id, machine_id, kind, status, info, files, requested_at';

const rowOf = (r: Row): BackupRow => ({
  backupId: Number(r.backup_id),
  contractId: Number(r.contract_id),
  ownerId: Number(r.owner_id),
  machineId: Number(r.machine_id),
  kind: r.kind as BackupRow['kind'],
  status: r.status as BackupRow['status'],
  info: r.info,
  files: typeof r.files === 'string' ? (JSON.parse(r.files) as BackupFile[]) : r.files,
  requestedAt: new Date(r.requested_at),
});

/** The owner's backups (of one contract when given), newest first; at most `limit`. */
export async function ownBackups(
  db: Sql,
  ownerId: number,
  contractId: number | null,
  limit = 100,
): Promise<BackupRow[]> {
  const rows = await db.query<Row>(
    `SELECT ${COLUMNS} FROM ${SCHEMA}.instance_backups
      WHERE owner_id = $1 AND ($2::int IS NULL OR contract_id = $2)
      ORDER BY backup_id DESC LIMIT $3`,
    [ownerId, contractId, limit],
  );
  return rows.map(rowOf);
}

export async function findBackup(db: Sql, backupId: number): Promise<BackupRow | null> {
  const rows = await db.query<Row>(`SELECT ${COLUMNS} FROM ${SCHEMA}.instance_backups WHERE backup_id = $1`, [
    backupId,
  ]);
  return rows[0] ? rowOf(rows[0]) : null;
}

/** The backup of the instance that its host is to take now (the newest still pending). */
export async function pendingBackupOf(db: Sql, contractId: number): Promise<BackupRow | null> {
  const rows = await db.query<Row>(
    `SELECT ${COLUMNS} FROM ${SCHEMA}.instance_backups WHERE contract_id = $1 AND status = 'pending'
      ORDER BY backup_id DESC LIMIT 1`,
    [contractId],
  );
  return rows[0] ? rowOf(rows[0]) : null;
}
