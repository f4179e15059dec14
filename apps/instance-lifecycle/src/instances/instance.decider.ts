import {
  DomainError,
  dollarsToMicros,
  type InstanceActualStatus,
  type InstanceBillingClass,
  type InstanceCreated,
  type InstanceEvent,
  type InstanceIntendedStatus,
} from '@rigmarket/contracts';

/**
 * `instance-<id>`: one rented instance. The renter states an intent (running/stopped, label, destroy);
 * the host reports what really happened (InstanceStateChanged). exited, unknown and offline never
 * reach running again: the renter destroys and retries elsewhere (spec, States rule 1).
 */
export type InstanceState =
  | { status: 'none' }
  | {
      status: 'active' | 'destroyed';
      instanceId: number;
      renter: number;
      machineId: number;
      numGpus: number;
      actual: InstanceActualStatus;
      intended: InstanceIntendedStatus;
      label: string | null;
      /** null = on-demand */
      bidPrice: number | null;
      /** stopped by a higher bid; its GPUs must be allocated again to start */
      outbid: boolean;
      hostId: number;
      /** $/hour while computing (the bid for interruptible instances) and while only storing. */
      dphTotal: number;
      storageDph: number;
      /** What the last InstanceBillingChanged said (class and rate), so only changes are emitted. */
      billed: { billing: InstanceBillingClass; ratePerHourMicros: number };
      /** Created with volume_info create_new: not provisioned until marketplace created the volume. */
      pendingVolume: { mountPath: string } | null;
    };

/** What creating an instance records: the InstanceCreated fields, with the optional ones required. */
export type CreateInstanceData = Required<Omit<InstanceCreated['data'], 'createdAt'>>;

export interface HostReport {
  actualStatus: Exclude<InstanceActualStatus, null>;
  sshHost?: string | null;
  sshPort?: number | null;
  ports?: Record<string, number>;
  statusMsg?: string | null;
}

export type InstanceCommand = { at: string } & (
  | ({ type: 'CreateInstance' } & CreateInstanceData)
  | { type: 'SetIntendedState'; requesterId: number; state: InstanceIntendedStatus }
  | { type: 'LabelInstance'; requesterId: number; label: string }
  | { type: 'DestroyInstance'; requesterId: number }
  | { type: 'RestartInstance'; requesterId: number; recycle: boolean }
  | { type: 'MarkOutbid'; reason?: 'credit' }
  | { type: 'ChangeBid'; requesterId: number; price: number }
  | ({ type: 'ReportHostState' } & HostReport)
  | { type: 'AttachVolume'; volumeId: number; ownerId: number; machineId: number }
  | { type: 'FailVolume'; reason: string }
);

export const InstanceErrors = {
  notFound: 'no_such_instance',
  exists: 'instance_exists',
  cannotStart: 'instance_cannot_start',
  notRunning: 'instance_not_running',
  notABid: 'not_a_bid',
  invalidReport: 'invalid_transition',
  waitingForVolume: 'instance_waiting_for_volume',
  volumeMismatch: 'volume_mismatch',
} as const;

/** status_msg of an instance whose volume (create_new) could not be created. */
export const volumeFailedMsg = (reason: string): string =>
  `Provisioning failed: the volume could not be created (${reason}). Destroy the instance and rent again, with a smaller volume or another volume offer.`;

/** States from which the instance never becomes running again. */
export const DEAD_STATES: readonly InstanceActualStatus[] = ['exited', 'unknown', 'offline'];

export const initialState = (): InstanceState => ({ status: 'none' });

export function evolve(state: InstanceState, event: InstanceEvent): InstanceState {
  switch (event.type) {
    case 'InstanceCreated':
      return {
        status: 'active',
        instanceId: event.data.instanceId,
        renter: event.data.renter,
        machineId: event.data.machineId,
        numGpus: event.data.numGpus,
        actual: null,
        intended: event.data.targetState,
        label: event.data.label,
        bidPrice: event.data.bidPrice,
        outbid: false,
        hostId: event.data.hostId,
        dphTotal: event.data.dphTotal,
        storageDph: event.data.storageDph ?? 0,
        billed: { billing: 'none', ratePerHourMicros: 0 },
        pendingVolume: event.data.config.newVolume
          ? { mountPath: event.data.config.newVolume.mountPath }
          : null,
      };
    case 'InstanceVolumeAttached':
      return state.status === 'none' ? state : { ...state, pendingVolume: null };
    case 'InstanceBillingChanged':
      return state.status === 'none'
        ? state
        : {
            ...state,
            billed: { billing: event.data.billing, ratePerHourMicros: event.data.ratePerHourMicros },
          };
    case 'InstanceStateChanged':
      return state.status === 'none' ? state : { ...state, actual: event.data.actualStatus };
    case 'InstanceIntentChanged':
      return state.status === 'none'
        ? state
        : {
            ...state,
            intended: event.data.intendedStatus,
            outbid: event.data.intendedStatus === 'running' ? false : state.outbid,
          };
    case 'InstanceOutbid':
      return state.status === 'none' ? state : { ...state, intended: 'stopped', outbid: true };
    case 'InstanceBidChanged':
      return state.status === 'none'
        ? state
        : { ...state, bidPrice: event.data.price, dphTotal: event.data.price };
    case 'InstanceLabelled':
      return state.status === 'none' ? state : { ...state, label: event.data.label };
    case 'InstanceRestarted':
      return state;
    case 'InstanceDestroyed':
      return state.status === 'none' ? state : { ...state, status: 'destroyed' };
  }
}

function owned(state: InstanceState, requesterId: number) {
  // Another renter's instance is reported as missing, like a destroyed one.
  if (state.status !== 'active' || state.renter !== requesterId)
    throw new DomainError(InstanceErrors.notFound, 'No such instance');
  return state;
}

/**
 * Billing per state (documented in docs/instances.md): compute while meant to run and running, as the host
 * reported it; storage in every other state (provisioning, loading, stopped, dead) until destroyed. An
 * instance that never ran (stuck provisioning, failed pull, destroyed while loading) is never billed compute.
 */
export function billingClassOf(
  actual: InstanceActualStatus,
  intended: InstanceIntendedStatus,
  destroyed: boolean,
): InstanceBillingClass {
  if (destroyed) return 'none';
  return intended === 'running' && actual === 'running' ? 'compute' : 'storage';
}

/** The decision, followed by an InstanceBillingChanged whenever it changes what the instance costs. */
export function decide(command: InstanceCommand, state: InstanceState): InstanceEvent[] {
  const events = decideChange(command, state);
  const after = events.reduce(evolve, state);
  if (after.status === 'none') return events;
  const billing = billingClassOf(after.actual, after.intended, after.status === 'destroyed');
  // The rate is money: integer micro-dollars per hour from here on (the prices behind it are bounded).
  const ratePerHourMicros = dollarsToMicros(
    billing === 'compute' ? after.dphTotal : billing === 'storage' ? after.storageDph : 0,
  );
  if (billing === after.billed.billing && ratePerHourMicros === after.billed.ratePerHourMicros) return events;
  const at = command.at;
  const data = {
    instanceId: after.instanceId,
    renter: after.renter,
    hostId: after.hostId,
    machineId: after.machineId,
    billing,
    ratePerHourMicros,
    at,
  };
  return [...events, { type: 'InstanceBillingChanged', data }];
}

function decideChange(command: InstanceCommand, state: InstanceState): InstanceEvent[] {
  switch (command.type) {
    case 'CreateInstance': {
      if (state.status !== 'none') throw new DomainError(InstanceErrors.exists, 'This instance id is taken');
      const { type: _type, at, ...data } = command;
      return [{ type: 'InstanceCreated', data: { ...data, createdAt: at } }];
    }
    case 'SetIntendedState': {
      const instance = owned(state, command.requesterId);
      if (command.state === 'running' && DEAD_STATES.includes(instance.actual)) {
        throw new DomainError(
          InstanceErrors.cannotStart,
          `Instance ${instance.instanceId} is ${String(instance.actual)} and cannot start again; destroy it and rent another offer`,
        );
      }
      if (instance.intended === command.state) return [];
      return [
        {
          type: 'InstanceIntentChanged',
          data: { instanceId: instance.instanceId, intendedStatus: command.state, at: command.at },
        },
      ];
    }
    case 'LabelInstance': {
      const instance = owned(state, command.requesterId);
      if (instance.label === command.label) return [];
      return [
        {
          type: 'InstanceLabelled',
          data: { instanceId: instance.instanceId, label: command.label, at: command.at },
        },
      ];
    }
    case 'RestartInstance': {
      const instance = owned(state, command.requesterId);
      if (DEAD_STATES.includes(instance.actual)) {
        throw new DomainError(
          InstanceErrors.cannotStart,
          `Instance ${instance.instanceId} is ${String(instance.actual)} and cannot start again; destroy it and rent another offer`,
        );
      }
      if (instance.intended !== 'running')
        throw new DomainError(
          InstanceErrors.notRunning,
          `Instance ${instance.instanceId} is stopped; start it instead`,
        );
      if (instance.pendingVolume)
        throw new DomainError(
          InstanceErrors.waitingForVolume,
          `Instance ${instance.instanceId} is waiting for its volume; it has no container to restart yet`,
        );
      return [
        {
          type: 'InstanceRestarted',
          data: { instanceId: instance.instanceId, recycle: command.recycle, at: command.at },
        },
      ];
    }
    case 'MarkOutbid': {
      if (state.status !== 'active' || state.outbid) return [];
      return [
        {
          type: 'InstanceOutbid',
          data: {
            instanceId: state.instanceId,
            machineId: state.machineId,
            numGpus: state.numGpus,
            at: command.at,
            ...(command.reason ? { reason: command.reason } : {}),
          },
        },
      ];
    }
    case 'ChangeBid': {
      const instance = owned(state, command.requesterId);
      if (instance.bidPrice === null)
        throw new DomainError(
          InstanceErrors.notABid,
          `Instance ${instance.instanceId} is on-demand; only interruptible instances have a bid`,
        );
      if (instance.bidPrice === command.price) return [];
      return [
        {
          type: 'InstanceBidChanged',
          data: { instanceId: instance.instanceId, price: command.price, at: command.at },
        },
      ];
    }
    case 'DestroyInstance': {
      if (state.status === 'destroyed' && state.renter === command.requesterId) return []; // idempotent: the CLI repeats it
      const instance = owned(state, command.requesterId);
      return [
        {
          type: 'InstanceDestroyed',
          data: {
            instanceId: instance.instanceId,
            renter: instance.renter,
            machineId: instance.machineId,
            numGpus: instance.numGpus,
            at: command.at,
          },
        },
      ];
    }
    case 'ReportHostState': {
      // A late report about a destroyed instance changes nothing; nor one about an instance the host does
      // not run yet (waiting for its volume: a stop for credit or an outbid only changes its intent then).
      if (state.status !== 'active' || state.pendingVolume !== null) return [];
      if (command.actualStatus === 'running' && DEAD_STATES.includes(state.actual)) {
        throw new DomainError(
          InstanceErrors.invalidReport,
          `Instance ${state.instanceId} is ${String(state.actual)}; it never reaches running`,
        );
      }
      if (command.actualStatus === state.actual) return [];
      return [
        {
          type: 'InstanceStateChanged',
          data: {
            instanceId: state.instanceId,
            actualStatus: command.actualStatus,
            sshHost: command.sshHost ?? null,
            sshPort: command.sshPort ?? null,
            ports: command.ports ?? {},
            statusMsg: command.statusMsg ?? null,
            at: command.at,
          },
        },
      ];
    }
    case 'AttachVolume': {
      // Late or repeated: a destroyed or dead instance, or one that has its volume already, changes nothing.
      if (state.status !== 'active' || !state.pendingVolume || DEAD_STATES.includes(state.actual)) return [];
      if (command.ownerId !== state.renter || command.machineId !== state.machineId) {
        throw new DomainError(
          InstanceErrors.volumeMismatch,
          `Volume ${command.volumeId} is not the renter's on machine ${state.machineId}`,
        );
      }
      return [
        {
          type: 'InstanceVolumeAttached',
          data: {
            instanceId: state.instanceId,
            volumeId: command.volumeId,
            mountPath: state.pendingVolume.mountPath,
            at: command.at,
          },
        },
      ];
    }
    case 'FailVolume': {
      if (state.status !== 'active' || !state.pendingVolume || DEAD_STATES.includes(state.actual)) return [];
      const data = {
        instanceId: state.instanceId,
        actualStatus: 'exited' as const,
        sshHost: null,
        sshPort: null,
        ports: {},
        statusMsg: volumeFailedMsg(command.reason),
        at: command.at,
      };
      return [{ type: 'InstanceStateChanged', data }];
    }
  }
}

export const instanceDecider = { initialState, evolve, decide };
export const instanceStreamId = (instanceId: number): string => `instance-${instanceId}`;
