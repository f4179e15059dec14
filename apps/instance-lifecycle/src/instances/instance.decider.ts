import { DomainError, dollarsToMicros, type InstanceEvent } from '@rigmarket/contracts';
import { decideSshKey, isSshKeyCommand } from './ssh-keys.decider';
import { decideReport, isReport } from './host-reports.decider';
import { decideSnapshot, isSnapshotCommand } from './snapshot.decider';
import { type InstanceCommand, InstanceErrors } from './instance.commands';
import { DEAD_STATES, type InstanceState, billingClassOf, evolve, initialState } from './instance.state';

export * from './instance.commands';
export * from './instance.state';

/**
 * `instance-<id>`: the renter's commands are decided here, the host's reports and the outbid and volume
 * outcomes in host-reports.decider.ts; the state and its evolve are in instance.state.ts.
 */

export function owned(state: InstanceState, requesterId: number) {
  // Another renter's instance is reported as missing, like a destroyed one.
  if (state.status !== 'active' || state.renter !== requesterId)
    throw new DomainError(InstanceErrors.notFound, 'No such instance');
  return state;
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
  if (isReport(command)) return decideReport(command, state);
  if (isSshKeyCommand(command)) return decideSshKey(command, owned(state, command.requesterId));
  if (isSnapshotCommand(command)) return decideSnapshot(command, state);
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
    case 'UpdateInstanceConfig': {
      const instance = owned(state, command.requesterId);
      if (DEAD_STATES.includes(instance.actual)) {
        throw new DomainError(
          InstanceErrors.cannotStart,
          `Instance ${instance.instanceId} is ${String(instance.actual)} and cannot start again; destroy it and rent another offer`,
        );
      }
      if (Object.keys(command.changes).length === 0)
        throw new DomainError(
          InstanceErrors.nothingToUpdate,
          'Nothing to update: give --image, --env, --onstart, --args, --template_id or --template_hash_id',
        );
      return [
        {
          type: 'InstanceConfigUpdated',
          data: {
            instanceId: instance.instanceId,
            changes: command.changes,
            ...(command.templateId !== null ? { templateId: command.templateId } : {}),
            at: command.at,
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
    case 'ExpireInstance': {
      // Only the machine's owner: to anyone else the instance is missing.
      if (state.status !== 'active' || state.hostId !== command.hostId)
        throw new DomainError(InstanceErrors.notFound, 'No such instance');
      const ended = command.contractEnd !== null && command.contractEnd * 1000 <= Date.parse(command.at);
      const idle = state.intended === 'stopped' || state.outbid || DEAD_STATES.includes(state.actual);
      if (!ended || !idle) return [];
      return [
        {
          type: 'InstanceDestroyed',
          data: {
            instanceId: state.instanceId,
            renter: state.renter,
            machineId: state.machineId,
            numGpus: state.numGpus,
            at: command.at,
          },
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
  }
}

/**
 * The stream grows with use (a long-lived instance gathers status reports, restarts (scheduled ones too), bid changes and updates), so commands start from a snapshot of the state (plain JSON) every
 * 100 events rather than folding the whole history.
 */
export const instanceDecider = { initialState, evolve, decide, snapshot: { version: 1, every: 100 } };
export const instanceStreamId = (instanceId: number): string => `instance-${instanceId}`;
