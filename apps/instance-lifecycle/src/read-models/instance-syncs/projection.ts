import { SYNC_FEED, type SyncEvent } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** One row per instance: its latest sync job (a new job replaces the previous one). */
export const instanceSyncsProjection = defineProjection<SyncEvent>({
  name: 'instance_syncs',
  version: 1,
  ...SYNC_FEED,
  tables: [`${SCHEMA}.instance_syncs`],
  async apply(sql, event) {
    const t = `${SCHEMA}.instance_syncs`;
    switch (event.type) {
      case 'SyncRequested': {
        const d = event.data;
        await sql.execute(
          `INSERT INTO ${t} (instance_id, job_id, kind, src_instance_id, transfer, status, bytes_copied, total_bytes, reason, updated_at)
           VALUES ($1, $2, $3, $4, $5, 'requested', 0, NULL, NULL, $6)
           ON CONFLICT (instance_id) DO UPDATE SET job_id = EXCLUDED.job_id, kind = EXCLUDED.kind, src_instance_id = EXCLUDED.src_instance_id,
             transfer = EXCLUDED.transfer, status = 'requested', bytes_copied = 0, total_bytes = NULL, reason = NULL, updated_at = EXCLUDED.updated_at`,
          [d.instanceId, d.jobId, d.kind, d.srcInstanceId, d.rclone?.transfer ?? null, d.at],
        );
        return;
      }
      case 'SyncStarted':
        await sql.execute(
          `UPDATE ${t} SET status = 'running', total_bytes = $3, updated_at = $4 WHERE instance_id = $1 AND job_id = $2`,
          [event.data.instanceId, event.data.jobId, event.data.totalBytes, event.data.at],
        );
        return;
      case 'SyncProgressed':
        await sql.execute(
          `UPDATE ${t} SET bytes_copied = $3, total_bytes = $4, updated_at = $5 WHERE instance_id = $1 AND job_id = $2`,
          [
            event.data.instanceId,
            event.data.jobId,
            event.data.bytesCopied,
            event.data.totalBytes,
            event.data.at,
          ],
        );
        return;
      case 'SyncCompleted':
        await sql.execute(
          `UPDATE ${t} SET status = 'completed', bytes_copied = $3, updated_at = $4 WHERE instance_id = $1 AND job_id = $2`,
          [event.data.instanceId, event.data.jobId, event.data.bytesCopied, event.data.at],
        );
        return;
      case 'SyncFailed':
        await sql.execute(
          `UPDATE ${t} SET status = 'failed', reason = $3, updated_at = $4 WHERE instance_id = $1 AND job_id = $2`,
          [event.data.instanceId, event.data.jobId, event.data.reason, event.data.at],
        );
        return;
      case 'SyncCanceled':
        await sql.execute(
          `UPDATE ${t} SET status = 'canceled', updated_at = $3 WHERE instance_id = $1 AND job_id = $2`,
          [event.data.instanceId, event.data.jobId, event.data.at],
        );
        return;
    }
  },
});
