import type {
  VolumeCopyCompleted,
  VolumeCopyFailed,
  VolumeCopyStarted,
  VolumeCreated,
} from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/**
 * Cloned volumes (`vastai clone volume`) and their copy, as `show volumes` shows them: `cloning` from the
 * VolumeCreated with cloneOf (this context's, inline: read-your-writes), then `online` or `failed` with the
 * reason from instance-lifecycle's volumecopy stream (subscribed). Each event writes only its own columns,
 * so the row ends the same in whichever order the two contexts' events are applied.
 */
export const volumeClonesProjection = defineProjection<
  VolumeCreated | VolumeCopyStarted | VolumeCopyCompleted | VolumeCopyFailed
>({
  name: 'volume_clones',
  version: 1,
  sources: [
    { context: 'marketplace', streamType: 'volume' },
    { context: 'instance', streamType: 'volumecopy' },
  ],
  tables: [`${SCHEMA}.volume_clones`],
  eventTypes: ['VolumeCreated', 'VolumeCopyStarted', 'VolumeCopyCompleted', 'VolumeCopyFailed'],
  async apply(sql, event) {
    const outcome = (status: string, msg: string | null, bytes: number | null) =>
      sql.execute(
        `INSERT INTO ${SCHEMA}.volume_clones (volume_id, status, status_msg, bytes_copied) VALUES ($1, $2, $3, $4)
         ON CONFLICT (volume_id) DO UPDATE SET status = EXCLUDED.status, status_msg = EXCLUDED.status_msg,
           bytes_copied = EXCLUDED.bytes_copied`,
        [event.data.volumeId, status, msg, bytes],
      );
    switch (event.type) {
      case 'VolumeCreated':
        if (!event.data.cloneOf) return;
        await sql.execute(
          `INSERT INTO ${SCHEMA}.volume_clones (volume_id, source_volume_id, status) VALUES ($1, $2, 'cloning')
           ON CONFLICT (volume_id) DO UPDATE SET source_volume_id = EXCLUDED.source_volume_id`,
          [event.data.volumeId, event.data.cloneOf.volumeId],
        );
        return;
      case 'VolumeCopyStarted':
        await sql.execute(
          `INSERT INTO ${SCHEMA}.volume_clones (volume_id, status) VALUES ($1, 'cloning') ON CONFLICT (volume_id) DO NOTHING`,
          [event.data.volumeId],
        );
        return;
      case 'VolumeCopyCompleted':
        await outcome('online', null, event.data.bytesCopied);
        return;
      case 'VolumeCopyFailed':
        await outcome('failed', event.data.reason, null);
        return;
    }
  },
});
