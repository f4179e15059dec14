import { type EventMetadata, refusalCode } from '@rigmarket/contracts';
import type { CommandBody, ContextRuntime, Sql, StreamAppend } from '@rigmarket/event-sourcing';
import { type StreamState, allocateGpus, decideOn, releaseGpus } from '../instance-commands';
import {
  type ProvisioningInput,
  type ProvisioningRequest,
  type ProvisioningState,
  nextOutput,
  provisioningStreamId,
  provisioningWorkflow,
} from './provisioning.workflow';

type Input = CommandBody<ProvisioningInput>;

/**
 * Carries out the provisioning workflow of one rent (provisioning.workflow.ts): each step runs in a
 * transaction that also records its outcome on the workflow's stream; the request is recorded in the first
 * step's (the allocation's) transaction, before its outcome. The handler runs the steps in order;
 * `compensate` (on a failure, or from ProvisioningRecovery after a crash) undoes what the stream says was done.
 */
export class Provisioning {
  /** The workflow's stream as the allocation's committed transaction left it (used once, by `created`). */
  private allocated: StreamState<ProvisioningState> | undefined;

  constructor(
    private readonly runtime: ContextRuntime,
    readonly request: ProvisioningRequest,
    private readonly metadata: EventMetadata,
  ) {}

  /**
   * Allocates the GPUs on the machine's allocation stream and records the request and the allocation on the
   * workflow's stream in the same statement (one transaction, one append to both streams). A refusal (the
   * GPUs are taken) rolls all of it back: nothing was rented and nothing is left to compensate; it is thrown.
   */
  async allocate(): Promise<void> {
    const { instanceId } = this.request;
    let recorded: StreamState<ProvisioningState> | undefined;
    try {
      await allocateGpus(this.runtime, this.request, this.metadata, {
        // The stream is new (the instance id was just drawn): nothing to read.
        alongside: async (sql) => {
          const step = await this.stepIn(
            sql,
            [
              { type: 'RequestProvisioning', ...this.request },
              { type: 'RecordGpusAllocated', instanceId },
            ],
            { state: provisioningWorkflow.initialState(), version: 0 },
          );
          recorded = step.recorded;
          return [step.append];
        },
        // The renter's answer needs only instance-lifecycle's own read models (inline): marketplace's
        // offers and billing learn of the rent from the relay, in the background.
        awaitPublication: false,
      });
    } catch (error) {
      await this.compensate(failureReason('GPUs not allocated', error));
      throw error;
    }
    // What the committed attempt recorded (the callback of every earlier attempt was rolled back).
    this.allocated = recorded;
  }

  /**
   * In the creating transaction, appended with the instance's events (HandleOptions.alongside): records that
   * the instance exists (refused when the rent was given up). The first attempt starts from the stream as the
   * allocation left it, without reading it: a step recorded since (the rent given up by the recovery) makes
   * the append fail and the command retry, reading it then.
   */
  async created(sql: Sql): Promise<StreamAppend[]> {
    const known = this.allocated;
    this.allocated = undefined;
    const { append } = await this.stepIn(
      sql,
      { type: 'RecordInstanceCreated', instanceId: this.request.instanceId },
      known,
    );
    return [append];
  }

  /**
   * Records the failure, then releases the GPUs when the stream says they were allocated. A compensation
   * that fails itself (the database is away) is left to ProvisioningRecovery, which finds the rent open.
   */
  async compensate(reason: string): Promise<void> {
    await compensateProvisioning(this.runtime, this.request.instanceId, reason, this.metadata).catch(
      () => undefined,
    );
  }

  /** A step decided on the workflow's stream (read unless `known`), for the caller's append. */
  private async stepIn(
    sql: Sql,
    input: Input | readonly Input[],
    known?: StreamState<ProvisioningState>,
  ): Promise<{ append: StreamAppend; recorded: StreamState<ProvisioningState> }> {
    const streamId = provisioningStreamId(this.request.instanceId);
    const now = this.runtime.runner.clock.now();
    const { after, decided, expectedVersion } = await decideOn(
      this.runtime,
      sql,
      streamId,
      provisioningWorkflow,
      input,
      now,
      known,
    );
    return {
      append: { streamId, expectedVersion, events: decided },
      recorded: { state: after, version: expectedVersion + decided.length },
    };
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

/** Why a step failed, as the workflow records it: the refusal's code, never an error's text (which may quote data). */
export const failureReason = (step: string, error: unknown): string =>
  `${step}: ${refusalCode(error) ?? 'unexpected error'}`;
