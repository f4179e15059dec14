import { DomainError, type DomainEvent } from '@rigmarket/contracts';

/**
 * `provisioning-<instanceId>`: the rent of one offer as a workflow (after emmett's Workflow): each input
 * (the request, then the outcome of each step) is recorded on this stream before the next output is acted
 * upon, and the outcome of a step is recorded in the transaction of the step itself. So the stream always
 * says how far a rent got, and a rent interrupted by a crash is compensated from it (provisioning.ts,
 * ProvisioningRecovery): GPUs allocated to an instance that was never created are released.
 *
 *   requested -> allocating --GpusAllocated--> creating --InstanceCreated--> completed
 *                    \--Failed--> failed          \--Failed--> compensating --GpusReleased--> compensated
 *
 * Since 2026-11-27 a rent's steps all share the creating transaction (the request, the allocation and the
 * instance in one append), so a rent is completed or absent; the failure paths serve the rents an older
 * release left open. Private to instance-lifecycle (not published); the request carries no secret (the
 * instance key and the registry login never leave the creating transaction).
 */
export interface ProvisioningRequest {
  instanceId: number;
  renter: number;
  machineId: number;
  numGpus: number;
  /** The machine's GPU count when the offer was read (the allocation decider needs it). */
  machineGpus: number;
  /** $/hour of an interruptible rental, null = on-demand. */
  bid: number | null;
}

export type ProvisioningRequested = DomainEvent<
  'ProvisioningRequested',
  ProvisioningRequest & { at: string }
>;
export type ProvisioningGpusAllocated = DomainEvent<
  'ProvisioningGpusAllocated',
  { instanceId: number; machineId: number; at: string }
>;
export type ProvisioningInstanceCreated = DomainEvent<
  'ProvisioningInstanceCreated',
  { instanceId: number; at: string }
>;
/** A step failed or the rent was interrupted; when GPUs were allocated, releasing them comes next. */
export type ProvisioningFailed = DomainEvent<
  'ProvisioningFailed',
  { instanceId: number; reason: string; at: string }
>;
export type ProvisioningGpusReleased = DomainEvent<
  'ProvisioningGpusReleased',
  { instanceId: number; machineId: number; at: string }
>;
export type ProvisioningEvent =
  | ProvisioningRequested
  | ProvisioningGpusAllocated
  | ProvisioningInstanceCreated
  | ProvisioningFailed
  | ProvisioningGpusReleased;

/** The inputs: the request, and what each step reports. */
export type ProvisioningInput = { instanceId: number; at: string } & (
  | ({ type: 'RequestProvisioning' } & ProvisioningRequest)
  | { type: 'RecordGpusAllocated' }
  | { type: 'RecordInstanceCreated' }
  | { type: 'FailProvisioning'; reason: string }
  | { type: 'RecordGpusReleased' }
);

export type ProvisioningStep =
  'none' | 'allocating' | 'creating' | 'completed' | 'failed' | 'compensating' | 'compensated';

export interface ProvisioningState {
  step: ProvisioningStep;
  request: ProvisioningRequest | null;
}

/** The output a state calls for: what the workflow's runner does next (null: nothing, the rent is over). */
export type ProvisioningOutput =
  | { type: 'AllocateGpus'; request: ProvisioningRequest }
  | { type: 'CreateInstance'; request: ProvisioningRequest }
  | { type: 'ReleaseGpus'; machineId: number; instanceId: number }
  | null;

export const ProvisioningErrors = { ended: 'provisioning_ended' } as const;

const ENDED: readonly ProvisioningStep[] = ['completed', 'failed', 'compensating', 'compensated'];
export const provisioningEnded = (state: ProvisioningState): boolean => ENDED.includes(state.step);

export const initialState = (): ProvisioningState => ({ step: 'none', request: null });

export function evolve(state: ProvisioningState, event: ProvisioningEvent): ProvisioningState {
  switch (event.type) {
    case 'ProvisioningRequested': {
      const { at: _at, ...request } = event.data;
      return { step: 'allocating', request };
    }
    case 'ProvisioningGpusAllocated':
      return { ...state, step: 'creating' };
    case 'ProvisioningInstanceCreated':
      return { ...state, step: 'completed' };
    case 'ProvisioningFailed':
      return { ...state, step: state.step === 'creating' ? 'compensating' : 'failed' };
    case 'ProvisioningGpusReleased':
      return { ...state, step: 'compensated' };
  }
}

/**
 * Pure: an input and the state -> the events that record it. A step's outcome that comes after the rent
 * ended (the recovery gave it up meanwhile) is refused, so the step's own transaction rolls back with it.
 */
export function decide(input: ProvisioningInput, state: ProvisioningState): ProvisioningEvent[] {
  const { instanceId, at } = input;
  switch (input.type) {
    case 'RequestProvisioning': {
      if (state.step !== 'none') return [];
      const { type: _type, ...data } = input;
      return [{ type: 'ProvisioningRequested', data }];
    }
    case 'RecordGpusAllocated':
      if (state.step === 'creating') return [];
      if (state.step !== 'allocating' || !state.request) throw ended(instanceId, state);
      return [
        { type: 'ProvisioningGpusAllocated', data: { instanceId, machineId: state.request.machineId, at } },
      ];
    case 'RecordInstanceCreated':
      if (state.step === 'completed') return [];
      if (state.step !== 'creating') throw ended(instanceId, state);
      return [{ type: 'ProvisioningInstanceCreated', data: { instanceId, at } }];
    case 'FailProvisioning':
      if (state.step !== 'allocating' && state.step !== 'creating') return [];
      return [{ type: 'ProvisioningFailed', data: { instanceId, reason: input.reason, at } }];
    case 'RecordGpusReleased':
      if (state.step !== 'compensating' || !state.request) return [];
      return [
        { type: 'ProvisioningGpusReleased', data: { instanceId, machineId: state.request.machineId, at } },
      ];
  }
}

/** What to act on next in this state. */
export function nextOutput(state: ProvisioningState): ProvisioningOutput {
  const request = state.request;
  if (!request) return null;
  switch (state.step) {
    case 'allocating':
      return { type: 'AllocateGpus', request };
    case 'creating':
      return { type: 'CreateInstance', request };
    case 'compensating':
      return { type: 'ReleaseGpus', machineId: request.machineId, instanceId: request.instanceId };
    default:
      return null;
  }
}

function ended(instanceId: number, state: ProvisioningState): DomainError {
  return new DomainError(
    ProvisioningErrors.ended,
    `The rent of instance ${instanceId} was interrupted before it completed (${state.step}); nothing was rented, rent again`,
  );
}

export const provisioningWorkflow = { initialState, evolve, decide };
export const provisioningStreamId = (instanceId: number): string => `provisioning-${instanceId}`;
