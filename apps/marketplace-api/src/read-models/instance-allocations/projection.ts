import type {
  InstanceCreated,
  InstanceDestroyed,
  InstanceIntentChanged,
  InstanceOutbid,
} from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { refreshOffers } from '../machines/offers';
import { SCHEMA } from '../../schema';

export const instanceAllocationsProjection = defineProjection<
  InstanceCreated | InstanceDestroyed | InstanceOutbid | InstanceIntentChanged
>({
  name: 'instance_allocations',
  version: 1,
  sources: [{ context: 'instance', streamType: 'instance' }],
  tables: [`${SCHEMA}.instance_allocations`],
  eventTypes: ['InstanceCreated', 'InstanceDestroyed', 'InstanceOutbid', 'InstanceIntentChanged'],
  async apply(sql, event) {
    let machineId: number;
    switch (event.type) {
      case 'InstanceCreated':
        machineId = event.data.machineId;
        await sql.execute(
          `INSERT INTO ${SCHEMA}.instance_allocations (instance_id, machine_id, num_gpus) VALUES ($1, $2, $3) ON CONFLICT (instance_id) DO NOTHING`,
          [event.data.instanceId, machineId, event.data.numGpus],
        );
        break;
      case 'InstanceDestroyed':
        machineId = event.data.machineId;
        await sql.execute(`DELETE FROM ${SCHEMA}.instance_allocations WHERE instance_id = $1`, [
          event.data.instanceId,
        ]);
        break;
      case 'InstanceOutbid':
        // an outbid instance holds no GPUs until it is started again
        machineId = event.data.machineId;
        await sql.execute(`UPDATE ${SCHEMA}.instance_allocations SET held = FALSE WHERE instance_id = $1`, [
          event.data.instanceId,
        ]);
        break;
      case 'InstanceIntentChanged': {
        if (event.data.intendedStatus !== 'running') return;
        const rows = await sql.query<{ machine_id: number }>(
          `UPDATE ${SCHEMA}.instance_allocations SET held = TRUE WHERE instance_id = $1 AND NOT held RETURNING machine_id`,
          [event.data.instanceId],
        );
        if (!rows[0]) return;
        machineId = Number(rows[0].machine_id);
        break;
      }
    }
    await refreshOffers(sql, machineId);
  },
});
