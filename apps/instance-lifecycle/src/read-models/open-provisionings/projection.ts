import { defineProjection } from '@rigmarket/event-sourcing';
import type { ProvisioningEvent } from '../../instances/create-instance/provisioning.workflow';
import { SCHEMA } from '../../schema';

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
  async apply(sql, event) {
    const { instanceId, at } = event.data;
    const step = async (name: string) =>
      sql.execute(
        `UPDATE ${SCHEMA}.open_provisionings SET step = $2, updated_at = $3 WHERE instance_id = $1`,
        [instanceId, name, at],
      );
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
  },
});
