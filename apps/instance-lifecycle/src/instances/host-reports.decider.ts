import { DomainError, type InstanceEvent } from '@rigmarket/contracts';
import { type InstanceCommand, InstanceErrors, volumeFailedMsg } from './instance.commands';
import { DEAD_STATES, type InstanceState } from './instance.state';

/** The commands on an instance that come from its host or from other streams, not from its renter. */
export type ReportCommand = Extract<
  InstanceCommand,
  { type: 'MarkOutbid' | 'ReportHostState' | 'AttachVolume' | 'FailVolume' }
>;

export const isReport = (command: InstanceCommand): command is ReportCommand =>
  command.type === 'MarkOutbid' ||
  command.type === 'ReportHostState' ||
  command.type === 'AttachVolume' ||
  command.type === 'FailVolume';

/**
 * Part of the instance decider (instance.decider.ts): an outbid (allocation stream), a host's report of
 * what really happened, and the volume created for the instance or refused (marketplace).
 */
export function decideReport(command: ReportCommand, state: InstanceState): InstanceEvent[] {
  switch (command.type) {
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
