import type { EventMetadata } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { allocationDecider, allocationStreamId } from '../../allocation/allocation.decider';
import { type ProvisioningRequest, provisioningStreamId } from '../create-instance/provisioning.workflow';

/**
 * What a rent of a release before 2026-11-27 left when its process died between its two transactions: the
 * GPUs allocated on the machine's stream with the workflow's request and allocation, no instance. Rents now
 * record all of it in one transaction; ProvisioningRecovery still ends such rents, and its tests make one here.
 */
export async function recordInterruptedRent(
  runtime: ContextRuntime,
  request: ProvisioningRequest,
  metadata: EventMetadata,
): Promise<void> {
  const { instanceId, machineId } = request;
  await runtime.runner.run(
    allocationStreamId(machineId),
    allocationDecider,
    { type: 'AllocateGpus', ...request },
    metadata,
    {
      alongside: async (_sql, _decided, now) => {
        const at = now.toISOString();
        return [
          {
            streamId: provisioningStreamId(instanceId),
            expectedVersion: 0,
            events: [
              { type: 'ProvisioningRequested', data: { ...request, at } },
              { type: 'ProvisioningGpusAllocated', data: { instanceId, machineId, at } },
            ],
          },
        ];
      },
    },
  );
}
