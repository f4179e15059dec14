import type {
  EventEnvelope,
  HostAgentEvent,
  InstanceEvent,
  MachineEvent,
  MaintenanceEvent,
  SyncEvent,
} from '@rigmarket/contracts';
import type { Migration, Projection, Sql } from '@rigmarket/event-sourcing';

export const SCHEMA = 'sync_maintenance';

/**
 * What sync-maintenance knows of the others (machine owners from marketplace, instance owners from
 * instance-lifecycle, over the transport) and its own read models (windows, sync jobs; inline).
 */
export const syncReadModelsMigration: Migration = {
  id: '0002-sync-maintenance-read-models',
  async up(sql, s) {
    await sql.execute(
      `CREATE TABLE ${s}.known_machines (machine_id INTEGER PRIMARY KEY, owner_id INTEGER NOT NULL)`,
    );
    await sql.execute(`
      CREATE TABLE ${s}.known_instances (
        instance_id INTEGER PRIMARY KEY,
        owner_id INTEGER NOT NULL,
        machine_id INTEGER NOT NULL,
        destroyed BOOLEAN NOT NULL DEFAULT FALSE
      )`);
    await sql.execute(`
      CREATE TABLE ${s}.maintenance_windows (
        window_id INTEGER PRIMARY KEY,
        machine_id INTEGER NOT NULL,
        owner_id INTEGER NOT NULL,
        start_time DOUBLE PRECISION NOT NULL,
        end_time DOUBLE PRECISION NOT NULL,
        duration_hours DOUBLE PRECISION NOT NULL,
        category TEXT NOT NULL
      )`);
    await sql.execute(
      `CREATE INDEX maintenance_windows_by_machine ON ${s}.maintenance_windows (machine_id, start_time)`,
    );
    await sql.execute(`
      CREATE TABLE ${s}.sync_jobs (
        job_id INTEGER PRIMARY KEY,
        instance_id INTEGER NOT NULL,
        kind TEXT NOT NULL,
        owner_id INTEGER NOT NULL,
        src_instance_id INTEGER,
        src_path TEXT NOT NULL,
        dst_path TEXT NOT NULL,
        rclone JSONB,
        status TEXT NOT NULL,
        bytes_copied DOUBLE PRECISION NOT NULL DEFAULT 0,
        total_bytes DOUBLE PRECISION,
        reason TEXT,
        requested_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL
      )`);
    await sql.execute(`CREATE INDEX sync_jobs_by_instance ON ${s}.sync_jobs (instance_id, job_id)`);
    await sql.execute(`CREATE SEQUENCE ${s}.sync_job_ids START 1`);
    await sql.execute(`CREATE SEQUENCE ${s}.maintenance_window_ids START 1`);
  },
};

/** Machines served by a host agent (instance-lifecycle's HostAgentEnrolled), and which executor ran each job. */
export const agentMachinesMigration: Migration = {
  id: '0003-agent-machines',
  async up(sql, s) {
    await sql.execute(
      `CREATE TABLE ${s}.agent_machines (machine_id INTEGER PRIMARY KEY, driver TEXT NOT NULL)`,
    );
    await sql.execute(`ALTER TABLE ${s}.sync_jobs ADD COLUMN executor TEXT NOT NULL DEFAULT 'platform'`);
  },
};

export const agentMachinesProjection: Projection = {
  name: 'agent_machines',
  version: 1,
  sources: [{ context: 'instance', streamType: 'hostagent' }],
  tables: [`${SCHEMA}.agent_machines`],
  async apply(sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as HostAgentEvent;
    if (event.type !== 'HostAgentEnrolled') return;
    await sql.execute(
      `INSERT INTO ${SCHEMA}.agent_machines (machine_id, driver) VALUES ($1, $2) ON CONFLICT (machine_id) DO NOTHING`,
      [event.data.machineId, event.data.driver],
    );
  },
};

/** Whether any of the instances runs on a machine a host agent serves. */
export async function onAgentMachine(sql: Sql, instanceIds: number[]): Promise<boolean> {
  const rows = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${SCHEMA}.known_instances i JOIN ${SCHEMA}.agent_machines a ON a.machine_id = i.machine_id WHERE i.instance_id = ANY($1::int[])`,
    [instanceIds],
  );
  return Number(rows[0]?.n ?? 0) > 0;
}

export const knownMachinesProjection: Projection = {
  name: 'known_machines',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'machine' }],
  tables: [`${SCHEMA}.known_machines`],
  async apply(sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as MachineEvent;
    if (event.type !== 'MachineRegistered') return;
    await sql.execute(
      `INSERT INTO ${SCHEMA}.known_machines (machine_id, owner_id) VALUES ($1, $2) ON CONFLICT (machine_id) DO NOTHING`,
      [event.data.machineId, event.data.ownerId],
    );
  },
};

export const knownInstancesProjection: Projection = {
  name: 'known_instances',
  version: 1,
  sources: [{ context: 'instance', streamType: 'instance' }],
  tables: [`${SCHEMA}.known_instances`],
  async apply(sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as InstanceEvent;
    switch (event.type) {
      case 'InstanceCreated':
        await sql.execute(
          `INSERT INTO ${SCHEMA}.known_instances (instance_id, owner_id, machine_id) VALUES ($1, $2, $3) ON CONFLICT (instance_id) DO NOTHING`,
          [event.data.instanceId, event.data.renter, event.data.machineId],
        );
        return;
      case 'InstanceDestroyed':
        await sql.execute(`UPDATE ${SCHEMA}.known_instances SET destroyed = TRUE WHERE instance_id = $1`, [
          event.data.instanceId,
        ]);
        return;
      default:
        return;
    }
  },
};

export const maintenanceWindowsProjection: Projection = {
  name: 'maintenance_windows',
  version: 1,
  sources: [{ context: 'sync', streamType: 'maintenance' }],
  tables: [`${SCHEMA}.maintenance_windows`],
  async apply(sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as MaintenanceEvent;
    switch (event.type) {
      case 'MaintenanceScheduled': {
        const d = event.data;
        await sql.execute(
          `INSERT INTO ${SCHEMA}.maintenance_windows (window_id, machine_id, owner_id, start_time, end_time, duration_hours, category)
           VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (window_id) DO NOTHING`,
          [d.windowId, d.machineId, d.ownerId, d.startTime, d.endTime, d.durationHours, d.category],
        );
        return;
      }
      case 'MaintenanceCanceled':
        await sql.execute(`DELETE FROM ${SCHEMA}.maintenance_windows WHERE window_id = ANY($1::int[])`, [
          event.data.windowIds,
        ]);
        return;
      default:
        return;
    }
  },
};

export const syncJobsProjection: Projection = {
  name: 'sync_jobs',
  version: 1,
  sources: [{ context: 'sync', streamType: 'sync' }],
  tables: [`${SCHEMA}.sync_jobs`],
  async apply(sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as SyncEvent;
    const t = `${SCHEMA}.sync_jobs`;
    switch (event.type) {
      case 'SyncRequested': {
        const d = event.data;
        await sql.execute(
          `INSERT INTO ${t} (job_id, instance_id, kind, owner_id, src_instance_id, src_path, dst_path, rclone, status, requested_at, updated_at, executor)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'requested', $9, $9, $10) ON CONFLICT (job_id) DO NOTHING`,
          [
            d.jobId,
            d.instanceId,
            d.kind,
            d.ownerId,
            d.srcInstanceId,
            d.srcPath,
            d.dstPath,
            d.rclone ? JSON.stringify(d.rclone) : null,
            d.at,
            d.executor ?? 'platform',
          ],
        );
        return;
      }
      case 'SyncStarted':
        await sql.execute(
          `UPDATE ${t} SET status = 'running', total_bytes = $2, updated_at = $3 WHERE job_id = $1`,
          [event.data.jobId, event.data.totalBytes, event.data.at],
        );
        return;
      case 'SyncProgressed':
        await sql.execute(
          `UPDATE ${t} SET bytes_copied = $2, total_bytes = $3, updated_at = $4 WHERE job_id = $1`,
          [event.data.jobId, event.data.bytesCopied, event.data.totalBytes, event.data.at],
        );
        return;
      case 'SyncCompleted':
        await sql.execute(
          `UPDATE ${t} SET status = 'completed', bytes_copied = $2, updated_at = $3 WHERE job_id = $1`,
          [event.data.jobId, event.data.bytesCopied, event.data.at],
        );
        return;
      case 'SyncFailed':
        await sql.execute(
          `UPDATE ${t} SET status = 'failed', reason = $2, updated_at = $3 WHERE job_id = $1`,
          [event.data.jobId, event.data.reason, event.data.at],
        );
        return;
      case 'SyncCanceled':
        await sql.execute(`UPDATE ${t} SET status = 'canceled', updated_at = $2 WHERE job_id = $1`, [
          event.data.jobId,
          event.data.at,
        ]);
        return;
      default:
        return;
    }
  },
};

export interface KnownInstance {
  instanceId: number;
  ownerId: number;
  machineId: number;
}

export async function findInstance(sql: Sql, instanceId: number): Promise<KnownInstance | null> {
  const rows = await sql.query<{ instance_id: number; owner_id: number; machine_id: number }>(
    `SELECT instance_id, owner_id, machine_id FROM ${SCHEMA}.known_instances WHERE instance_id = $1 AND NOT destroyed`,
    [instanceId],
  );
  const row = rows[0];
  return row
    ? {
        instanceId: Number(row.instance_id),
        ownerId: Number(row.owner_id),
        machineId: Number(row.machine_id),
      }
    : null;
}

export async function machineOwner(sql: Sql, machineId: number): Promise<number | null> {
  const rows = await sql.query<{ owner_id: number }>(
    `SELECT owner_id FROM ${SCHEMA}.known_machines WHERE machine_id = $1`,
    [machineId],
  );
  return rows[0] ? Number(rows[0].owner_id) : null;
}
