import type { DomainEvent } from './envelope';

/**
 * Public (integration) events of the instance-lifecycle context (`instance-<id>` streams). Billing and
 * the marketplace's free-GPU counts can follow them; GPU allocation itself is private to the context.
 */

/** The spec's actual_status values; null = being provisioned. `stopped` is the confirmed stop. */
export type InstanceActualStatus =
  null | 'loading' | 'running' | 'stopped' | 'exited' | 'unknown' | 'offline';
export type InstanceIntendedStatus = 'running' | 'stopped';
/** Canonical launch modes (the CLI's "ssh_direc ssh_proxy" forms are normalized to these). */
export type InstanceRuntype = 'ssh_direct' | 'ssh_proxy' | 'jupyter_direct' | 'jupyter_proxy' | 'args';

/** What the instance runs, after the template merge (precedence table of the spec). */
export interface InstanceConfig {
  image: string;
  runtype: InstanceRuntype;
  /** Variables and `-p host:container` port keys (value "1"). */
  env: Record<string, string>;
  disk: number;
  onstart: string | null;
  argsStr: string | null;
  args: string[] | null;
  useJupyterLab: boolean;
  jupyterDir: string | null;
  pythonUtf8: boolean;
  langUtf8: boolean;
  /** `-u <user> -p <token> <registry>`; carried over from the template's docker_login_* when absent. */
  imageLogin: string | null;
  extraFilters: Record<string, unknown>;
  templateHashId: string | null;
  /** A VM instead of a container (only on machines with vms_enabled). */
  vm?: boolean;
  /** volume_info of the request: an existing local volume of the renter on this machine, mounted at mountPath. */
  volume?: { volumeId: number; mountPath: string } | null;
  /**
   * volume_info with create_new: a volume to create from a volume offer (its id is the offer's machine id)
   * before the instance is provisioned. marketplace creates it (VolumeCreated with this instanceId) or
   * refuses it (VolumeRefused); InstanceVolumeAttached then sets `volume`.
   */
  newVolume?: { volumeOfferId: number; sizeGb: number; name: string | null; mountPath: string } | null;
}

export type InstanceCreated = DomainEvent<
  'InstanceCreated',
  {
    instanceId: number;
    /** The renter. */
    renter: number;
    machineId: number;
    hostId: number;
    offerId: number;
    numGpus: number;
    gpuName: string;
    /** $/hour as accepted (the bid price for interruptible rentals). */
    dphTotal: number;
    /** $/hour of the disk alone, billed while the instance is stopped (absent in events before billing). */
    storageDph?: number;
    /** null = on-demand. */
    bidPrice: number | null;
    label: string | null;
    targetState: InstanceIntendedStatus;
    config: InstanceConfig;
    /**
     * The numeric id of the template the config was merged from (config.templateHashId names its revision;
     * the hash changes on every edit, the id does not). null without a template; absent in older events.
     */
    templateId?: number | null;
    /**
     * sha256 (hex) of the instance's API key, so every context can refuse that key with 403 off its routes
     * (the value itself is in no event). Absent in events before it was published.
     */
    apiKeyHash?: string;
    /**
     * The host's own default job on the machine's idle GPUs (`vastai set defjob`): any renter's rental takes
     * its GPUs, so offer search counts them as free. Absent for every other instance.
     */
    defaultJob?: boolean;
    createdAt: string;
  }
>;
/** The host's report of a real transition (null -> loading -> running, stopped, exited...). */
export type InstanceStateChanged = DomainEvent<
  'InstanceStateChanged',
  {
    instanceId: number;
    actualStatus: InstanceActualStatus;
    sshHost: string | null;
    sshPort: number | null;
    /** container port -> host port, once running */
    ports: Record<string, number>;
    statusMsg: string | null;
    at: string;
  }
>;
/** The renter asked for running or stopped; the host confirms with InstanceStateChanged. */
export type InstanceIntentChanged = DomainEvent<
  'InstanceIntentChanged',
  { instanceId: number; intendedStatus: InstanceIntendedStatus; at: string }
>;
export type InstanceLabelled = DomainEvent<
  'InstanceLabelled',
  { instanceId: number; label: string; at: string }
>;
export type InstanceDestroyed = DomainEvent<
  'InstanceDestroyed',
  { instanceId: number; renter: number; machineId: number; numGpus: number; at: string }
>;

/** The volume created for the instance (config.newVolume) exists: it is mounted at mountPath and the host may provision. */
export type InstanceVolumeAttached = DomainEvent<
  'InstanceVolumeAttached',
  { instanceId: number; volumeId: number; mountPath: string; at: string }
>;

/** Reboot (restart the container) or recycle (recreate it from a fresh pull), keeping the GPUs. */
export type InstanceRestarted = DomainEvent<
  'InstanceRestarted',
  { instanceId: number; recycle: boolean; at: string }
>;

/**
 * `vastai update instance`: the renter changed what the container runs. Only the changed settings are
 * present (env replaces the whole env; argsStr is the args string); templateHashId/templateId when a template
 * was named. The host recreates the container with them, keeping its GPUs and volume.
 */
export type InstanceConfigUpdated = DomainEvent<
  'InstanceConfigUpdated',
  {
    instanceId: number;
    changes: InstanceConfigChanges;
    templateId?: number;
    at: string;
  }
>;
export type InstanceConfigChanges = Partial<
  Pick<InstanceConfig, 'image' | 'env' | 'onstart' | 'argsStr' | 'templateHashId'>
>;

/**
 * The instance lost its GPUs and is stopped; starting it takes GPUs again. An interruptible instance to a
 * higher bid or an on-demand rental (no reason), or any instance of an account that ran out of credit
 * (reason `credit`, docs/instances.md, Credit).
 */
export type InstanceOutbid = DomainEvent<
  'InstanceOutbid',
  { instanceId: number; machineId: number; numGpus: number; at: string; reason?: 'credit' }
>;
/** The renter changed the bid ($/hour) of an interruptible instance. */
export type InstanceBidChanged = DomainEvent<
  'InstanceBidChanged',
  { instanceId: number; price: number; at: string }
>;

/**
 * What the instance costs from now on: compute (dph_total) while it is meant to run and the host is
 * provisioning or running it, storage (the disk alone) while it is stopped or dead, none once destroyed.
 * marketplace's billing meter charges the renter per period from these events.
 */
export type InstanceBillingClass = 'compute' | 'storage' | 'none';
export type InstanceBillingChanged = DomainEvent<
  'InstanceBillingChanged',
  {
    instanceId: number;
    renter: number;
    hostId: number;
    machineId: number;
    billing: InstanceBillingClass;
    /** The rate billed from `at` on, in micro-dollars per hour (integer; version 1 carried float dollars). */
    ratePerHourMicros: number;
    at: string;
  }
>;

/**
 * The renter attached an OpenSSH public key to the instance (`vastai attach ssh`): it goes into the
 * container's /root/.ssh/authorized_keys. keyId numbers the instance's keys from 1 and is never reused.
 * Only a public key line (parsePublicKey): never private material.
 */
export type InstanceSshKeyAttached = DomainEvent<
  'InstanceSshKeyAttached',
  { instanceId: number; keyId: number; publicKey: string; at: string }
>;
/** The renter detached the instance's key keyId (`vastai detach ssh`): it leaves authorized_keys. */
export type InstanceSshKeyDetached = DomainEvent<
  'InstanceSshKeyDetached',
  { instanceId: number; keyId: number; at: string }
>;

/**
 * The renter asked for a snapshot of the instance's container (`vastai take snapshot`): its host commits the
 * container (paused or not) and pushes it as `image` (`registry/repo:tag`) with the renter's registry login,
 * which travels sealed in the host command only, never in an event. snapshotId numbers the instance's
 * snapshots from 1; one runs at a time.
 */
export type InstanceSnapshotRequested = DomainEvent<
  'InstanceSnapshotRequested',
  { instanceId: number; snapshotId: number; image: string; pause: boolean; at: string }
>;
/** The host pushed the snapshot: `digest` is the registry's manifest digest (sha256:...) of `image`. */
export type InstanceSnapshotCompleted = DomainEvent<
  'InstanceSnapshotCompleted',
  { instanceId: number; snapshotId: number; image: string; digest: string; at: string }
>;
/** The snapshot failed (commit or push refused, wrong credentials, time limit): `reason` is shown to the renter. */
export type InstanceSnapshotFailed = DomainEvent<
  'InstanceSnapshotFailed',
  { instanceId: number; snapshotId: number; reason: string; at: string }
>;

/** The most keys one instance holds at once (each at most MAX_SSH_KEY_LENGTH characters). */
export const MAX_INSTANCE_SSH_KEYS = 10;

export type InstanceEvent =
  | InstanceCreated
  | InstanceBillingChanged
  | InstanceStateChanged
  | InstanceIntentChanged
  | InstanceLabelled
  | InstanceRestarted
  | InstanceConfigUpdated
  | InstanceOutbid
  | InstanceBidChanged
  | InstanceVolumeAttached
  | InstanceSshKeyAttached
  | InstanceSshKeyDetached
  | InstanceSnapshotRequested
  | InstanceSnapshotCompleted
  | InstanceSnapshotFailed
  | InstanceDestroyed;

export const InstancePublicEvents = {
  InstanceCreated: { schemaVersion: 1, streamType: 'instance' },
  InstanceStateChanged: { schemaVersion: 1, streamType: 'instance' },
  InstanceIntentChanged: { schemaVersion: 1, streamType: 'instance' },
  InstanceLabelled: { schemaVersion: 1, streamType: 'instance' },
  InstanceRestarted: { schemaVersion: 1, streamType: 'instance' },
  InstanceConfigUpdated: { schemaVersion: 1, streamType: 'instance' },
  InstanceOutbid: { schemaVersion: 1, streamType: 'instance' },
  InstanceBidChanged: { schemaVersion: 1, streamType: 'instance' },
  InstanceDestroyed: { schemaVersion: 1, streamType: 'instance' },
  InstanceBillingChanged: { schemaVersion: 2, streamType: 'instance' },
  InstanceVolumeAttached: { schemaVersion: 1, streamType: 'instance' },
  InstanceSshKeyAttached: { schemaVersion: 1, streamType: 'instance' },
  InstanceSshKeyDetached: { schemaVersion: 1, streamType: 'instance' },
  InstanceSnapshotRequested: { schemaVersion: 1, streamType: 'instance' },
  InstanceSnapshotCompleted: { schemaVersion: 1, streamType: 'instance' },
  InstanceSnapshotFailed: { schemaVersion: 1, streamType: 'instance' },
} as const;
