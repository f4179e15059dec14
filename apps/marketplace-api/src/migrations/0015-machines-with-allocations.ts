import { type Migration, replayProjection } from '@rigmarket/event-sourcing';
import { machinesProjection } from '../read-models/machines/projection';

/**
 * instance_allocations joins the machines projection (machines, offers and allocations have one owner, so
 * no projection reads another's table): the machines read model is replayed from the machine and instance
 * streams once, and the former instance_allocations projection's positions are dropped.
 */
export const machinesWithAllocations: Migration = {
  id: '0015-machines-with-allocations',
  async up(sql, s) {
    for (const table of ['projection_stream_positions', 'projection_checkpoints'])
      await sql.execute(`DELETE FROM ${s}.${table} WHERE projection = 'instance_allocations'`);
    const [parked] = await sql.query<{ found: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS found`, [
      `${s}.dead_letters`,
    ]);
    // Its parked events are the machines projection's now.
    if (parked?.found)
      await sql.execute(
        `UPDATE ${s}.dead_letters SET subscriber = 'machines' WHERE subscriber = 'instance_allocations'`,
      );
    await replayProjection(sql, s, machinesProjection);
  },
};
