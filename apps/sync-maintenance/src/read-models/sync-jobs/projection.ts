import { SYNC_FEED, type SyncEvent } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** Sync jobs (copies into an instance) and their progress (inline: read-your-writes). */
export const syncJobsProjection = defineProjection<SyncEvent>({
  name: 'sync_jobs',
  version: 1,
  ...SYNC_FEED,
  tables: [`${SCHEMA}.sync_jobs`],
  async apply(sql, event) {
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
    }
  },
});
