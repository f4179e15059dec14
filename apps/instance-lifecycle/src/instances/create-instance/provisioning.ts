import type { EventMetadata } from '@rigmarket/contracts';
import type { CommandBody, ContextRuntime, Sql, StreamAppend } from '@rigmarket/event-sourcing';
import {
  type AllocationEvent,
  allocationDecider,
  allocationStreamId,
} from '../../allocation/allocation.decider';
import { decideOn, markOutbidIn, releaseGpus } from '../instance-commands';
import {
  type ProvisioningInput,
  type ProvisioningRequest,
  nextOutput,
  provisioningStreamId,
  provisioningWorkflow,
} from './provisioning.workflow';

type Input = CommandBody<ProvisioningInput>;

/**
 * The provisioning workflow of one rent (provisioning.workflow.ts), recorded whole in the creating
 * transaction: the instance's command appends, in the same statement (HandleOptions.alongside), the GPUs
 * allocated on the machine's allocation stream and the workflow's request, allocation and creation. So a rent
 * either happened entirely or left nothing: no crash can hold GPUs for an instance that was never created.
 * `compensate` (ProvisioningRecovery) still ends the rents an older release left open between its two
 * transactions.
 */
export class Provisioning {
  private attempts = 0;
  /** The allocation events the current attempt decided (the instances they outbid are marked after the append). */
  private allocation: readonly AllocationEvent[] = [];

  constructor(
    private readonly runtime: ContextRuntime,
    readonly request: ProvisioningRequest,
  ) {}

  /**
   * In the creating transaction, before the append (HandleOptions.alongside, called again on every attempt):
   * the allocation decided on the machine's stream (from its snapshot) and the workflow's three steps. A
   * refusal (the GPUs are taken) is thrown and rolls the whole rent back; a concurrent allocation of the
   * machine makes the append fail on the stream's version, and the command runs again.
   */
  async alongsideInstance(sql: Sql, now: Date): Promise<StreamAppend[]> {
    const { instanceId, machineId } = this.request;
    const allocated = await decideOn(
      this.runtime,
      sql,
      allocationStreamId(machineId),
      allocationDecider,
      { type: 'AllocateGpus', ...this.request },
      now,
    );
    this.allocation = allocated.decided;
    // The instance id was just drawn: its workflow's stream is new (read again only on a retry).
    this.attempts += 1;
    const steps = await decideOn(
      this.runtime,
      sql,
      provisioningStreamId(instanceId),
      provisioningWorkflow,
      [
        { type: 'RequestProvisioning', ...this.request },
        { type: 'RecordGpusAllocated', instanceId },
        { type: 'RecordInstanceCreated', instanceId },
      ],
      now,
      this.attempts === 1 ? { state: provisioningWorkflow.initialState(), version: 0 } : undefined,
    );
    return [allocated.append, steps.append];
  }

  /**
   * In the creating transaction, after the append: the instances the allocation outbid are marked outbid
   * on their own streams (their stops go to host_commands). Returns how many events that wrote.
   */
  markOutbid(sql: Sql, metadata: EventMetadata): Promise<number> {
    return markOutbidIn(this.runtime, sql, this.allocation, metadata);
  }
}

/**
 * Gives up a rent: `ProvisioningFailed` (nothing when it completed or ended before), then, when its GPUs
 * were allocated, releases them and records that. Idempotent: a crash between the two is finished by the
 * next call (the allocation stream releases nothing twice).
 */
export async function compensateProvisioning(
  runtime: ContextRuntime,
  instanceId: number,
  reason: string,
  metadata: EventMetadata,
): Promise<void> {
  const run = (input: Input) =>
    runtime.runner.run(provisioningStreamId(instanceId), provisioningWorkflow, input, metadata);
  const { state } = await run({ type: 'FailProvisioning', instanceId, reason });
  const output = nextOutput(state);
  if (output?.type !== 'ReleaseGpus') return;
  await releaseGpus(runtime, output.machineId, output.instanceId, metadata);
  await run({ type: 'RecordGpusReleased', instanceId });
}
