import type { InstanceCreated, InstanceDestroyed } from '@rigmarket/contracts';
import { type EnvelopeOf, type Sql, defineProjection, insertsInRuns } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

export const WEBHOOK_INSTANCE_OWNERS_TABLE = `${SCHEMA}.webhook_instance_owners`;

async function applyEvent(sql: Sql, event: EnvelopeOf<InstanceCreated | InstanceDestroyed>): Promise<void> {
  switch (event.type) {
    case 'InstanceCreated':
      await sql.execute(
        `INSERT INTO ${WEBHOOK_INSTANCE_OWNERS_TABLE} (instance_id, owner_id, machine_id) VALUES ($1, $2, $3)
         ON CONFLICT (instance_id) DO NOTHING`,
        [event.data.instanceId, event.data.renter, event.data.machineId],
      );
      return;
    case 'InstanceDestroyed':
      await sql.execute(
        `UPDATE ${WEBHOOK_INSTANCE_OWNERS_TABLE} SET destroyed = true WHERE instance_id = $1`,
        [event.data.instanceId],
      );
      return;
  }
}

/**
 * Whose each instance is and on which machine, from instance-lifecycle's events: the webhooks reactor
 * addresses an instance's state changes, outbids and copies to its renter, and a machine's maintenance to
 * the renters of its live instances.
 */
export const webhookInstanceOwnersProjection = defineProjection<InstanceCreated | InstanceDestroyed>({
  name: 'webhook_instance_owners',
  version: 1,
  sources: [{ context: 'instance', streamType: 'instance' }],
  tables: [WEBHOOK_INSTANCE_OWNERS_TABLE],
  eventTypes: ['InstanceCreated', 'InstanceDestroyed'],
  apply: applyEvent,
  // A delivery of many rents: their instances in one INSERT.
  applyBatch: insertsInRuns<InstanceCreated | InstanceDestroyed, 'InstanceCreated'>({
    type: 'InstanceCreated',
    table: WEBHOOK_INSTANCE_OWNERS_TABLE,
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
