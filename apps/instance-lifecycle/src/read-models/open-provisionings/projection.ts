import { type EnvelopeOf, type Sql, defineProjection } from '@rigmarket/event-sourcing';
import type { ProvisioningEvent } from '../../instances/create-instance/provisioning.workflow';
import { SCHEMA } from '../../schema';

async function applyEvent(sql: Sql, event: EnvelopeOf<ProvisioningEvent>): Promise<void> {
  const { instanceId, at } = event.data;
  const step = async (name: string) =>
    sql.execute(`UPDATE ${SCHEMA}.open_provisionings SET step = $2, updated_at = $3 WHERE instance_id = $1`, [
      instanceId,
      name,
      at,
    ]);
  const end = async () =>
    sql.execute(`DELETE FROM ${SCHEMA}.open_provisionings WHERE instance_id = $1`, [instanceId]);
  switch (event.type) {
    case 'ProvisioningRequested':
      await sql.execute(
        `INSERT INTO ${SCHEMA}.open_provisionings (instance_id, machine_id, step, updated_at) VALUES ($1, $2, 'allocating', $3)
         ON CONFLICT (instance_id) DO NOTHING`,
        [instanceId, event.data.machineId, at],
      );
      return;
    case 'ProvisioningGpusAllocated':
      await step('creating');
      return;
    case 'ProvisioningFailed': {
      // GPUs allocated are released next; before that, nothing was held and the rent is over.
      const [row] = await sql.query<{ step: string }>(
        `SELECT step FROM ${SCHEMA}.open_provisionings WHERE instance_id = $1`,
        [instanceId],
      );
      if (row?.step === 'creating') await step('compensating');
      else await end();
      return;
    }
    case 'ProvisioningInstanceCreated':
    case 'ProvisioningGpusReleased':
      await end();
      return;
  }
}

/**
 * The rents whose provisioning workflow has not ended, with their step and the time of their last event
 * (the events' own `at`, so a rebuild gives the same rows): what ProvisioningRecovery looks through.
 */
export const openProvisioningsProjection = defineProjection<ProvisioningEvent>({
  name: 'open_provisionings',
  version: 1,
  sources: [{ context: 'instance', streamType: 'provisioning' }],
  tables: [`${SCHEMA}.open_provisionings`],
  eventTypes: [
    'ProvisioningRequested',
    'ProvisioningGpusAllocated',
    'ProvisioningInstanceCreated',
    'ProvisioningFailed',
    'ProvisioningGpusReleased',
  ],
  apply: applyEvent,
  // A rent records its request, allocation and instance in one append (one batch, applied in its
  // transaction): it opens and ends there, so no row, as the INSERT, UPDATE and DELETE would leave it (a
  // stream records one request only: no earlier row of that instance exists). A rent recorded by an older
  // release had its request and allocation in one append: its row starts at 'creating', as the INSERT and
  // then the UPDATE would leave it.
  async applyBatch(sql, events) {
    for (let i = 0; i < events.length; i += 1) {
      const event = events[i]!;
      const next = events[i + 1];
      const third = events[i + 2];
      if (
        event.type === 'ProvisioningRequested' &&
        next?.type === 'ProvisioningGpusAllocated' &&
        third?.type === 'ProvisioningInstanceCreated' &&
        next.data.instanceId === event.data.instanceId &&
        third.data.instanceId === event.data.instanceId
      ) {
        i += 2;
      } else if (
        event.type === 'ProvisioningRequested' &&
        next?.type === 'ProvisioningGpusAllocated' &&
        next.data.instanceId === event.data.instanceId
      ) {
        await sql.execute(
          `INSERT INTO ${SCHEMA}.open_provisionings (instance_id, machine_id, step, updated_at) VALUES ($1, $2, 'creating', $3)
           ON CONFLICT (instance_id) DO UPDATE SET step = EXCLUDED.step, updated_at = EXCLUDED.updated_at`,
          [event.data.instanceId, event.data.machineId, next.data.at],
        );
        i += 1;
      } else await applyEvent(sql, event);
    }
  },
});
