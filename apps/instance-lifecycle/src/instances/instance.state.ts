import type {
  InstanceActualStatus,
  InstanceBillingClass,
  InstanceEvent,
  InstanceIntendedStatus,
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
      /** The attached SSH public keys, oldest first, and the id the next one gets (ids are never reused). */
      sshKeys: InstanceSshKey[];
      nextSshKeyId: number;
      /** The snapshot its host is taking (one at a time), and the id the next one gets. */
      snapshot: PendingSnapshot | null;
      nextSnapshotId: number;
    };

export interface PendingSnapshot {
  snapshotId: number;
  image: string;
  requestedAt: string;
}

export interface InstanceSshKey {
  keyId: number;
  publicKey: string;
}

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
        sshKeys: [],
        nextSshKeyId: 1,
        snapshot: null,
        nextSnapshotId: 1,
      };
    case 'InstanceSnapshotRequested':
      return state.status === 'none'
        ? state
        : {
            ...state,
            snapshot: {
              snapshotId: event.data.snapshotId,
              image: event.data.image,
              requestedAt: event.data.at,
            },
            nextSnapshotId: Math.max(state.nextSnapshotId, event.data.snapshotId + 1),
          };
    case 'InstanceSnapshotCompleted':
    case 'InstanceSnapshotFailed':
      return state.status === 'none' || state.snapshot?.snapshotId !== event.data.snapshotId
        ? state
        : { ...state, snapshot: null };
    case 'InstanceSshKeyAttached':
      return state.status === 'none'
        ? state
        : {
            ...state,
            sshKeys: [...state.sshKeys, { keyId: event.data.keyId, publicKey: event.data.publicKey }],
            nextSshKeyId: Math.max(state.nextSshKeyId, event.data.keyId + 1),
          };
    case 'InstanceSshKeyDetached':
      return state.status === 'none'
        ? state
        : { ...state, sshKeys: state.sshKeys.filter((k) => k.keyId !== event.data.keyId) };
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
    case 'InstanceConfigUpdated':
      return state;
    case 'InstanceDestroyed':
      return state.status === 'none' ? state : { ...state, status: 'destroyed' };
  }
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
