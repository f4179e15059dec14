import type { InstanceActualStatus, InstanceEvent, InstanceIntendedStatus } from '@rigmarket/contracts';
import {
  CREDIT_RELEASED_MSG,
  OUTBID_MSG,
  waitingForVolumeMsg,
} from '../read-models/instances/status-messages';
import { actionsFor, statusMessageFor } from '../instances/queries/instance-view';

/**
 * What a live stream shows of an instance after each of its events: the fields of its poll answer that
 * change (state, status_msg, label, actions), folded from its events the way the instances read model
 * applies them, so a change read back from the store says what the poll said then.
 */
export interface InstanceChangeState {
  actual: InstanceActualStatus;
  intended: InstanceIntendedStatus;
  label: string | null;
  statusMsg: string | null;
  destroyed: boolean;
}

/** Events a stream does not send: billing periods change nothing the renter's view shows. */
export const UNSENT_EVENTS: ReadonlySet<string> = new Set(['InstanceBillingChanged']);

export function evolveChange(
  state: InstanceChangeState | null,
  event: InstanceEvent,
): InstanceChangeState | null {
  if (event.type === 'InstanceCreated') {
    const d = event.data;
    return {
      actual: null,
      intended: d.targetState,
      label: d.label,
      statusMsg: d.config.newVolume ? waitingForVolumeMsg(d.config.newVolume) : 'Provisioning',
      destroyed: false,
    };
  }
  if (!state) return state;
  switch (event.type) {
    case 'InstanceStateChanged':
      return { ...state, actual: event.data.actualStatus, statusMsg: event.data.statusMsg };
    case 'InstanceIntentChanged':
      return { ...state, intended: event.data.intendedStatus };
    case 'InstanceLabelled':
      return { ...state, label: event.data.label };
    case 'InstanceOutbid':
      return {
        ...state,
        intended: 'stopped',
        statusMsg: event.data.reason === 'credit' ? CREDIT_RELEASED_MSG : OUTBID_MSG,
      };
    case 'InstanceVolumeAttached':
      return { ...state, statusMsg: 'Provisioning' };
    case 'InstanceDestroyed':
      return { ...state, destroyed: true };
    default:
      return state;
  }
}

/** The `data` of one `instance` event of /instances/events/ (docs/instances.md "Live streams"). */
export function changeView(instanceId: number, type: string, at: string, state: InstanceChangeState) {
  return {
    id: instanceId,
    event: type,
    at,
    actual_status: state.actual,
    intended_status: state.intended,
    cur_state: state.intended,
    status_msg: statusMessageFor(state.actual, state.statusMsg),
    label: state.label ?? '',
    actions: state.destroyed ? [] : actionsFor(state.actual, state.intended),
    destroyed: state.destroyed,
  };
}

export type InstanceChangeView = ReturnType<typeof changeView>;
