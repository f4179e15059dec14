import type { InstanceCreated, InstanceDestroyed } from '@rigmarket/contracts';
import { type EnvelopeOf, type Sql, defineProjection, insertsInRuns } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

async function applyEvent(sql: Sql, event: EnvelopeOf<InstanceCreated | InstanceDestroyed>): Promise<void> {
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
  }
}

/** Instance owners and machines, from instance-lifecycle's instance events. */
export const knownInstancesProjection = defineProjection<InstanceCreated | InstanceDestroyed>({
  name: 'known_instances',
  version: 1,
  sources: [{ context: 'instance', streamType: 'instance' }],
  tables: [`${SCHEMA}.known_instances`],
  eventTypes: ['InstanceCreated', 'InstanceDestroyed'],
  apply: applyEvent,
  // A delivery of many rents: their instances in one INSERT.
  applyBatch: insertsInRuns<InstanceCreated | InstanceDestroyed, 'InstanceCreated'>({
    type: 'InstanceCreated',
    table: `${SCHEMA}.known_instances`,
    columns: [
      ['instance_id', 'int'],
      ['owner_id', 'int'],
      ['machine_id', 'int'],
    ],
    row: (event) => [event.data.instanceId, event.data.renter, event.data.machineId],
    tail: 'ON CONFLICT (instance_id) DO NOTHING',
    apply: applyEvent,
  }),
});
