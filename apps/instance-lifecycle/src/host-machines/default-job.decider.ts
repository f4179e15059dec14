import { DomainError, type DomainEvent } from '@rigmarket/contracts';

/**
 * `defjob-<machineId>`: the machine owner's default job (`vastai set defjob` / `remove defjob`), an
 * instance of the host's own on the machine's idle GPUs at a bid of 0, so that any rental outbids it
 * (docs/instances.md, "Default jobs"). Private to instance-lifecycle: the job is an ordinary instance, whose
 * public events say the rest.
 */
export interface DefaultJob {
  image: string;
  args: string[] | null;
  /** What the host asked for ($/hour per GPU, $/GB): recorded and shown, not charged (the job bids 0). */
  priceGpu: number | null;
  priceInetUp: number | null;
  priceInetDown: number | null;
}
/** instanceId: the job's instance, or null when no GPU was idle when it was set. */
export type DefaultJobSet = DomainEvent<
  'DefaultJobSet',
  { machineId: number; hostId: number; job: DefaultJob; instanceId: number | null; at: string }
>;
export type DefaultJobRemoved = DomainEvent<
  'DefaultJobRemoved',
  { machineId: number; hostId: number; instanceId: number | null; at: string }
>;
export type DefaultJobEvent = DefaultJobSet | DefaultJobRemoved;

export type DefaultJobState = { job: null } | { job: DefaultJob; hostId: number; instanceId: number | null };

/** ownerId: the machine's owner as instance-lifecycle knows it (null: no such machine). */
export type DefaultJobCommand = {
  at: string;
  machineId: number;
  requesterId: number;
  ownerId: number | null;
} & ({ type: 'SetDefaultJob'; job: DefaultJob; instanceId: number | null } | { type: 'RemoveDefaultJob' });

export const DefaultJobErrors = { notFound: 'no_such_machine' } as const;

export const initialState = (): DefaultJobState => ({ job: null });

export function evolve(_state: DefaultJobState, event: DefaultJobEvent): DefaultJobState {
  return event.type === 'DefaultJobSet'
    ? { job: event.data.job, hostId: event.data.hostId, instanceId: event.data.instanceId }
    : { job: null };
}

export function decide(command: DefaultJobCommand, state: DefaultJobState): DefaultJobEvent[] {
  // Another host's machine is reported as missing, like one that does not exist.
  if (command.ownerId === null || command.ownerId !== command.requesterId)
    throw new DomainError(DefaultJobErrors.notFound, 'no such machine id');
  const { machineId, requesterId: hostId, at } = command;
  switch (command.type) {
    case 'SetDefaultJob':
      return [
        {
          type: 'DefaultJobSet',
          data: { machineId, hostId, job: command.job, instanceId: command.instanceId, at },
        },
      ];
    case 'RemoveDefaultJob':
      if (state.job === null) return [];
      return [{ type: 'DefaultJobRemoved', data: { machineId, hostId, instanceId: state.instanceId, at } }];
  }
}

/**
 * The stream grows with use (the default job is set again every time a rental preempts or frees it), so commands start from a snapshot of the state (plain JSON) every
 * 100 events rather than folding the whole history.
 */
export const defaultJobDecider = { initialState, evolve, decide, snapshot: { version: 1, every: 100 } };
export const defaultJobStreamId = (machineId: number): string => `defjob-${machineId}`;
