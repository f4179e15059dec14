import type { DomainEvent } from './envelope';

/**
 * Public (integration) events of the marketplace-api context. instance-lifecycle projects the machine
 * events (offers it may accept) and the template events (template_hash_id on instance creation).
 */

/** Hardware as the host agent detected it. RAM in MB, disk in GB, bandwidth in Mb/s. */
export interface MachineHardware {
  hostname: string | null;
  gpuName: string;
  numGpus: number;
  gpuRamMb: number;
  cudaMaxGood: number;
  driverVersion: string;
  computeCap: number;
  cpuName: string | null;
  cpuCores: number;
  cpuGhz: number | null;
  cpuRamMb: number;
  diskSpaceGb: number;
  diskBwMbps: number | null;
  diskName: string | null;
  inetUpMbps: number;
  inetDownMbps: number;
  directPortCount: number;
  publicIpaddr: string | null;
  geolocation: string | null;
  pcieGen: number | null;
  pcieBwGbps: number | null;
  /** 1 = datacenter, 0 = individual host */
  hostingType: number;
  /** The host can run VM instances (`vm: true` on creation); absent = containers only. */
  vmsEnabled?: boolean;
}

export interface MachineAsk {
  /** $/hour per GPU */
  priceGpu: number;
  /** $/GB/month */
  priceDisk: number;
  /** $/GB */
  priceInetUp: number;
  priceInetDown: number;
  /** $/hour per GPU for interruptible (bid) rentals */
  minBid: number;
  minChunk: number;
  /** epoch seconds; null = open ended */
  endDate: number | null;
  creditDiscountMax: number;
  duration: string | null;
  volSize: number | null;
  volPrice: number | null;
}

export type MachineVerification = 'unverified' | 'verified' | 'deverified';

export type MachineRegistered = DomainEvent<
  'MachineRegistered',
  {
    machineId: number;
    ownerId: number;
    hardware: MachineHardware;
    dlperf: number;
    tflops: number;
    registeredAt: string;
  }
>;
export type MachineListed = DomainEvent<
  'MachineListed',
  { machineId: number; ownerId: number; ask: MachineAsk; listedAt: string }
>;
export type MachineUnlisted = DomainEvent<'MachineUnlisted', { machineId: number; unlistedAt: string }>;
/**
 * The host deleted the machine (`vastai delete machine`): no other user had an instance on it. It leaves
 * search and every machine list; its id is never reused.
 */
export type MachineDeleted = DomainEvent<
  'MachineDeleted',
  { machineId: number; ownerId: number; deletedAt: string }
>;
export type MinBidChanged = DomainEvent<'MinBidChanged', { machineId: number; minBid: number }>;
export type MachineVerificationChanged = DomainEvent<
  'MachineVerificationChanged',
  { machineId: number; verification: MachineVerification }
>;
/**
 * A heartbeat from the host agent, with the reliability it yielded. No longer recorded: heartbeats are
 * liveness rows (marketplace.machine_liveness) and only MachineReliabilityChanged reaches the stream; older
 * streams still hold these, so consumers keep reading them.
 */
export type MachineHeartbeat = DomainEvent<
  'MachineHeartbeat',
  { machineId: number; at: string; reliability: number }
>;
/** The reliability over the rolling window moved: after a heartbeat, or while the machine is silent (the sweep). */
export type MachineReliabilityChanged = DomainEvent<
  'MachineReliabilityChanged',
  { machineId: number; at: string; reliability: number }
>;

/** A host offers disk space on a machine for renters' volumes (one volume listing per machine). */
export type VolumeSpaceListed = DomainEvent<
  'VolumeSpaceListed',
  {
    machineId: number;
    ownerId: number;
    sizeGb: number;
    priceDisk: number;
    endDate: number | null;
    listedAt: string;
  }
>;
export type VolumeSpaceUnlisted = DomainEvent<
  'VolumeSpaceUnlisted',
  { machineId: number; unlistedAt: string }
>;

export type MachineEvent =
  | MachineRegistered
  | MachineListed
  | MachineUnlisted
  | MachineDeleted
  | MinBidChanged
  | MachineVerificationChanged
  | MachineHeartbeat
  | MachineReliabilityChanged
  | VolumeSpaceListed
  | VolumeSpaceUnlisted;

/**
 * A renter's volume on a machine (`volume-<id>`). instanceId: created for that instance's volume_info
 * create_new (absent for `PUT /api/v0/volumes/`). cloneOf: created by `vastai clone volume` as a copy of
 * the owner's volume `volumeId` on machine `machineId`; the copy itself is instance-lifecycle's
 * `volumecopy-<id>` stream (host-agent-events.ts).
 */
export type VolumeCreated = DomainEvent<
  'VolumeCreated',
  {
    volumeId: number;
    ownerId: number;
    machineId: number;
    sizeGb: number;
    name: string | null;
    priceDisk: number;
    createdAt: string;
    instanceId?: number;
    cloneOf?: { volumeId: number; machineId: number };
  }
>;
export type VolumeDeleted = DomainEvent<
  'VolumeDeleted',
  { volumeId: number; machineId: number; sizeGb: number; deletedAt: string }
>;
/** The volume an instance asked for (create_new) could not be created; no volume exists under this id. */
export type VolumeRefused = DomainEvent<
  'VolumeRefused',
  {
    volumeId: number;
    instanceId: number;
    ownerId: number;
    machineId: number;
    sizeGb: number;
    reason: string;
    at: string;
  }
>;
export type VolumeEvent = VolumeCreated | VolumeDeleted | VolumeRefused;

/** A template's content as stored (the spec's Template fields, snake_case as the API shows them). */
export interface TemplateContent {
  name: string;
  image: string;
  tag: string;
  desc: string | null;
  readme: string | null;
  readme_visible: boolean;
  env: string;
  onstart: string | null;
  runtype: string;
  args_str: string | null;
  ssh_direct: boolean;
  use_ssh: boolean;
  jup_direct: boolean;
  jupyter_dir: string | null;
  use_jupyter_lab: boolean;
  docker_login_repo: string;
  docker_login_user: string;
  docker_login_pass: string;
  href: string | null;
  repo: string | null;
  extra_filters: Record<string, unknown>;
  recommended_disk_space: number;
  private: boolean;
  volume_info: Record<string, unknown> | null;
}

export type TemplateCreated = DomainEvent<
  'TemplateCreated',
  { templateId: number; hashId: string; creatorId: number; content: TemplateContent; createdAt: string }
>;
export type TemplateEdited = DomainEvent<
  'TemplateEdited',
  { templateId: number; hashId: string; content: TemplateContent; editedAt: string }
>;
export type TemplateDeleted = DomainEvent<
  'TemplateDeleted',
  { templateId: number; hashId: string; deletedAt: string }
>;
export type TemplateEvent = TemplateCreated | TemplateEdited | TemplateDeleted;

/**
 * Each account's credit ledger (`ledger-<userId>`). Amounts are integer micro-dollars (`amountMicros`,
 * schema version 2, money.ts); version 1 payloads carried float dollars (`amount`) and are upcast.
 */
export type CreditGranted = DomainEvent<
  'CreditGranted',
  { userId: number; amountMicros: number; grantedBy: number; note: string | null; at: string }
>;
export type AccountCharged = DomainEvent<
  'AccountCharged',
  {
    userId: number;
    instanceId: number;
    machineId: number;
    kind: 'gpu' | 'storage';
    amountMicros: number;
    periodStart: string;
    periodEnd: string;
    at: string;
    /** The host who earns this charge (marketplace's host-earnings reactor appends its HostEarned); absent in older events. */
    hostId?: number;
  }
>;
export type HostEarned = DomainEvent<
  'HostEarned',
  {
    userId: number;
    machineId: number;
    instanceId: number;
    amountMicros: number;
    at: string;
    /** The AccountCharged (event id) this earning follows from: one earning per charge; absent in older events. */
    chargeId?: string;
  }
>;
/** The balance reached zero: instance-lifecycle stops the account's running instances. */
export type CreditExhausted = DomainEvent<
  'CreditExhausted',
  { userId: number; balanceMicros: number; at: string }
>;
/**
 * Credit moved between two accounts (`vastai transfer credit`): the sender's ledger records what left it,
 * then marketplace's credit-transfers reactor records the same amount arriving on the recipient's ledger,
 * once per transfer (`transferId`, the CreditTransferred event's id).
 */
export type CreditTransferred = DomainEvent<
  'CreditTransferred',
  { userId: number; recipientId: number; amountMicros: number; at: string }
>;
export type CreditReceived = DomainEvent<
  'CreditReceived',
  { userId: number; senderId: number; amountMicros: number; transferId: string; at: string }
>;
/**
 * Reserved instances (`vastai prepay instance ID AMOUNT`): the renter moves credit into one instance's deposit
 * (InstancePrepaid takes it off the balance); each charge of that instance is then paid from the deposit first
 * (DepositDrawn gives the covered part of an AccountCharged back to the balance, so the charge and the host's
 * earning stay as they were), and what is left when the instance is destroyed returns to the balance
 * (DepositRefunded).
 */
export type InstancePrepaid = DomainEvent<
  'InstancePrepaid',
  { userId: number; instanceId: number; amountMicros: number; at: string }
>;
export type DepositDrawn = DomainEvent<
  'DepositDrawn',
  { userId: number; instanceId: number; amountMicros: number; at: string }
>;
export type DepositRefunded = DomainEvent<
  'DepositRefunded',
  { userId: number; instanceId: number; amountMicros: number; at: string }
>;
export type DepositEvent = InstancePrepaid | DepositDrawn | DepositRefunded;
export type LedgerEvent =
  | CreditGranted
  | AccountCharged
  | HostEarned
  | CreditExhausted
  | CreditTransferred
  | CreditReceived
  | DepositEvent;

/** What a ledger event does to its account's balance, in micros: the one rule every ledger read model uses. */
export function ledgerDeltaMicros(event: { type: string; data: unknown }): number {
  const e = event as LedgerEvent;
  switch (e.type) {
    case 'CreditGranted':
    case 'HostEarned':
    case 'CreditReceived':
    case 'DepositDrawn':
    case 'DepositRefunded':
      return e.data.amountMicros;
    case 'AccountCharged':
    case 'CreditTransferred':
    case 'InstancePrepaid':
      return -e.data.amountMicros;
    default:
      return 0;
  }
}

export const MarketplacePublicEvents = {
  CreditGranted: { schemaVersion: 2, streamType: 'ledger' },
  AccountCharged: { schemaVersion: 2, streamType: 'ledger' },
  HostEarned: { schemaVersion: 2, streamType: 'ledger' },
  CreditExhausted: { schemaVersion: 2, streamType: 'ledger' },
  CreditTransferred: { schemaVersion: 1, streamType: 'ledger' },
  CreditReceived: { schemaVersion: 1, streamType: 'ledger' },
  InstancePrepaid: { schemaVersion: 1, streamType: 'ledger' },
  DepositDrawn: { schemaVersion: 1, streamType: 'ledger' },
  DepositRefunded: { schemaVersion: 1, streamType: 'ledger' },
  MachineRegistered: { schemaVersion: 1, streamType: 'machine' },
  MachineListed: { schemaVersion: 1, streamType: 'machine' },
  MachineUnlisted: { schemaVersion: 1, streamType: 'machine' },
  MachineDeleted: { schemaVersion: 1, streamType: 'machine' },
  MinBidChanged: { schemaVersion: 1, streamType: 'machine' },
  MachineVerificationChanged: { schemaVersion: 1, streamType: 'machine' },
  MachineHeartbeat: { schemaVersion: 1, streamType: 'machine' },
  MachineReliabilityChanged: { schemaVersion: 1, streamType: 'machine' },
  VolumeSpaceListed: { schemaVersion: 1, streamType: 'machine' },
  VolumeSpaceUnlisted: { schemaVersion: 1, streamType: 'machine' },
  VolumeCreated: { schemaVersion: 1, streamType: 'volume' },
  VolumeDeleted: { schemaVersion: 1, streamType: 'volume' },
  VolumeRefused: { schemaVersion: 1, streamType: 'volume' },
  TemplateCreated: { schemaVersion: 1, streamType: 'template' },
  TemplateEdited: { schemaVersion: 1, streamType: 'template' },
  TemplateDeleted: { schemaVersion: 1, streamType: 'template' },
} as const;
