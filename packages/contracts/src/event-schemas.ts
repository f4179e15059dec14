import { z } from 'zod';
import type { ContextName, DomainEvent, EventEnvelope } from './envelope';
import type {
  AgentCopyAborted,
  AgentCopyCompleted,
  AgentCopyFailed,
  AgentCopyProgressed,
  AgentCopyStarted,
  HostAgentEnrolled,
  VolumeCopyCompleted,
  VolumeCopyFailed,
  VolumeCopyStarted,
} from './host-agent-events';
import type {
  ApiKeyCreated,
  ApiKeyDeleted,
  ApiKeyReset,
  TeamRoleCreated,
  TeamRoleDeleted,
  TeamRoleUpdated,
  UserEmailVerified,
  UserProfileUpdated,
  UserRegistered,
} from './identity';
import type {
  InstanceBidChanged,
  InstanceBillingChanged,
  InstanceConfig,
  InstanceCreated,
  InstanceDestroyed,
  InstanceIntentChanged,
  InstanceLabelled,
  InstanceOutbid,
  InstanceRestarted,
  InstanceConfigUpdated,
  InstanceSshKeyAttached,
  InstanceSshKeyDetached,
  InstanceSnapshotCompleted,
  InstanceSnapshotFailed,
  InstanceSnapshotRequested,
  InstanceStateChanged,
  InstanceVolumeAttached,
} from './instance';
import type {
  AccountCharged,
  CreditExhausted,
  CreditGranted,
  CreditReceived,
  CreditTransferred,
  DepositDrawn,
  DepositRefunded,
  HostEarned,
  InstancePrepaid,
  MachineAsk,
  MachineHardware,
  MachineHeartbeat,
  MachineListed,
  MachineRegistered,
  MachineReliabilityChanged,
  MachineUnlisted,
  MachineDeleted,
  MachineVerificationChanged,
  MinBidChanged,
  TemplateContent,
  TemplateCreated,
  TemplateDeleted,
  TemplateEdited,
  VolumeCreated,
  VolumeDeleted,
  VolumeRefused,
  VolumeSpaceListed,
  VolumeSpaceUnlisted,
} from './marketplace';
import { PERMISSION_CATEGORIES, type PermissionsObject } from './permissions';
import { PUBLIC_EVENTS } from './schema-registry';
import type { CloudConnectionListed, CloudConnectionRemoved } from './cloud-connections';
import { MAX_SSH_KEY_LENGTH } from './ssh-public-key';
import type {
  MaintenanceCanceled,
  MaintenanceScheduled,
  SyncCanceled,
  SyncCompleted,
  SyncFailed,
  SyncProgressed,
  SyncRequested,
  SyncStarted,
} from './sync';
import type { ScheduledCloudCopyDue } from './cloud-copy-call';

/**
 * The runtime schema of every public event's payload (its current schema version), checked before a
 * projection or reactor of another context applies an inbound event: an event that does not match is
 * parked with the schema's complaint, not applied. Each schema is checked against the payload's TypeScript
 * type at compile time (`payload<E>()`), and the event catalog (docs/events) lists them.
 */

/** A schema whose parsed value must be assignable to the event's payload type. */
const payload =
  <E extends DomainEvent>() =>
  <S extends z.ZodType<E['data']>>(schema: S): S =>
    schema;

const id = z.number().int();
const time = z.string().min(1);
const money = z.number().int();
const nullable = <S extends z.ZodType>(schema: S) => schema.nullable();

const rclone = z.object({
  connection: z.string(),
  transfer: z.enum(['Instance To Cloud', 'Cloud To Instance']),
  flags: z.array(z.string()),
});

const permissions: z.ZodType<PermissionsObject> = z.object({
  api: z.partialRecord(z.enum(PERMISSION_CATEGORIES), z.record(z.string(), z.unknown())),
});

const hardware: z.ZodType<MachineHardware> = z.object({
  hostname: nullable(z.string()),
  gpuName: z.string(),
  numGpus: z.number().int().nonnegative(),
  gpuRamMb: z.number(),
  cudaMaxGood: z.number(),
  driverVersion: z.string(),
  computeCap: z.number(),
  cpuName: nullable(z.string()),
  cpuCores: z.number(),
  cpuGhz: nullable(z.number()),
  cpuRamMb: z.number(),
  diskSpaceGb: z.number(),
  diskBwMbps: nullable(z.number()),
  diskName: nullable(z.string()),
  inetUpMbps: z.number(),
  inetDownMbps: z.number(),
  directPortCount: z.number(),
  publicIpaddr: nullable(z.string()),
  geolocation: nullable(z.string()),
  pcieGen: nullable(z.number()),
  pcieBwGbps: nullable(z.number()),
  hostingType: z.number(),
  vmsEnabled: z.boolean().optional(),
});

const ask: z.ZodType<MachineAsk> = z.object({
  priceGpu: z.number(),
  priceDisk: z.number(),
  priceInetUp: z.number(),
  priceInetDown: z.number(),
  minBid: z.number(),
  minChunk: z.number(),
  endDate: nullable(z.number()),
  creditDiscountMax: z.number(),
  duration: nullable(z.string()),
  volSize: nullable(z.number()),
  volPrice: nullable(z.number()),
});

const templateContent: z.ZodType<TemplateContent> = z.object({
  name: z.string(),
  image: z.string(),
  tag: z.string(),
  desc: nullable(z.string()),
  readme: nullable(z.string()),
  readme_visible: z.boolean(),
  env: z.string(),
  onstart: nullable(z.string()),
  runtype: z.string(),
  args_str: nullable(z.string()),
  ssh_direct: z.boolean(),
  use_ssh: z.boolean(),
  jup_direct: z.boolean(),
  jupyter_dir: nullable(z.string()),
  use_jupyter_lab: z.boolean(),
  docker_login_repo: z.string(),
  docker_login_user: z.string(),
  docker_login_pass: z.string(),
  href: nullable(z.string()),
  repo: nullable(z.string()),
  extra_filters: z.record(z.string(), z.unknown()),
  recommended_disk_space: z.number(),
  private: z.boolean(),
  volume_info: nullable(z.record(z.string(), z.unknown())),
});

const instanceConfig: z.ZodType<InstanceConfig> = z.object({
  image: z.string(),
  runtype: z.enum(['ssh_direct', 'ssh_proxy', 'jupyter_direct', 'jupyter_proxy', 'args']),
  env: z.record(z.string(), z.string()),
  disk: z.number(),
  onstart: nullable(z.string()),
  argsStr: nullable(z.string()),
  args: nullable(z.array(z.string())),
  useJupyterLab: z.boolean(),
  jupyterDir: nullable(z.string()),
  pythonUtf8: z.boolean(),
  langUtf8: z.boolean(),
  imageLogin: nullable(z.string()),
  extraFilters: z.record(z.string(), z.unknown()),
  templateHashId: nullable(z.string()),
  vm: z.boolean().optional(),
  volume: nullable(z.object({ volumeId: id, mountPath: z.string() })).optional(),
  newVolume: nullable(
    z.object({ volumeOfferId: id, sizeGb: z.number(), name: nullable(z.string()), mountPath: z.string() }),
  ).optional(),
});

const actualStatus = nullable(z.enum(['loading', 'running', 'stopped', 'exited', 'unknown', 'offline']));
const intendedStatus = z.enum(['running', 'stopped']);

const identity = {
  ApiKeyCreated: payload<ApiKeyCreated>()(
    z.object({
      keyId: id,
      userId: id,
      name: nullable(z.string()),
      keyHash: z.string().regex(/^[0-9a-f]{64}$/, 'a hex sha256'),
      permissions: nullable(permissions),
      kind: z.enum(['api', 'session', 'instance']),
      createdAt: time,
      expiresAt: time.optional(),
    }),
  ),
  ApiKeyReset: payload<ApiKeyReset>()(
    z.object({ keyId: id, keyHash: z.string().regex(/^[0-9a-f]{64}$/, 'a hex sha256'), resetAt: time }),
  ),
  ApiKeyDeleted: payload<ApiKeyDeleted>()(z.object({ keyId: id, deletedAt: time })),
  UserRegistered: payload<UserRegistered>()(
    z.object({
      userId: id,
      email: z.string(),
      username: nullable(z.string()),
      fullName: nullable(z.string()),
      isAdmin: z.boolean(),
      registeredAt: time,
    }),
  ),
  UserEmailVerified: payload<UserEmailVerified>()(z.object({ userId: id, verifiedAt: time })),
  UserProfileUpdated: payload<UserProfileUpdated>()(
    z.object({
      userId: id,
      fullName: nullable(z.string()).optional(),
      sshKey: nullable(z.string()).optional(),
    }),
  ),
  TeamRoleCreated: payload<TeamRoleCreated>()(
    z.object({ roleId: id, name: z.string(), permissions: z.array(z.string()), builtIn: z.boolean() }),
  ),
  TeamRoleUpdated: payload<TeamRoleUpdated>()(
    z.object({ roleId: id, name: z.string(), permissions: z.array(z.string()) }),
  ),
  TeamRoleDeleted: payload<TeamRoleDeleted>()(z.object({ roleId: id, name: z.string() })),
};

const machineReliability = z.object({ machineId: id, at: time, reliability: z.number().min(0).max(1) });

const marketplace = {
  CreditGranted: payload<CreditGranted>()(
    z.object({ userId: id, amountMicros: money, grantedBy: id, note: nullable(z.string()), at: time }),
  ),
  AccountCharged: payload<AccountCharged>()(
    z.object({
      userId: id,
      instanceId: id,
      machineId: id,
      kind: z.enum(['gpu', 'storage']),
      amountMicros: money,
      periodStart: time,
      periodEnd: time,
      at: time,
      hostId: id.optional(),
    }),
  ),
  HostEarned: payload<HostEarned>()(
    z.object({
      userId: id,
      machineId: id,
      instanceId: id,
      amountMicros: money,
      at: time,
      chargeId: z.string().optional(),
    }),
  ),
  CreditExhausted: payload<CreditExhausted>()(z.object({ userId: id, balanceMicros: money, at: time })),
  CreditTransferred: payload<CreditTransferred>()(
    z.object({ userId: id, recipientId: id, amountMicros: money.positive(), at: time }),
  ),
  CreditReceived: payload<CreditReceived>()(
    z.object({
      userId: id,
      senderId: id,
      amountMicros: money.positive(),
      transferId: z.string().min(1),
      at: time,
    }),
  ),
  InstancePrepaid: payload<InstancePrepaid>()(
    z.object({ userId: id, instanceId: id, amountMicros: money.positive(), at: time }),
  ),
  DepositDrawn: payload<DepositDrawn>()(
    z.object({ userId: id, instanceId: id, amountMicros: money.positive(), at: time }),
  ),
  DepositRefunded: payload<DepositRefunded>()(
    z.object({ userId: id, instanceId: id, amountMicros: money.positive(), at: time }),
  ),
  MachineRegistered: payload<MachineRegistered>()(
    z.object({
      machineId: id,
      ownerId: id,
      hardware,
      dlperf: z.number(),
      tflops: z.number(),
      registeredAt: time,
    }),
  ),
  MachineListed: payload<MachineListed>()(z.object({ machineId: id, ownerId: id, ask, listedAt: time })),
  MachineUnlisted: payload<MachineUnlisted>()(z.object({ machineId: id, unlistedAt: time })),
  MachineDeleted: payload<MachineDeleted>()(z.object({ machineId: id, ownerId: id, deletedAt: time })),
  MinBidChanged: payload<MinBidChanged>()(z.object({ machineId: id, minBid: z.number() })),
  MachineVerificationChanged: payload<MachineVerificationChanged>()(
    z.object({ machineId: id, verification: z.enum(['unverified', 'verified', 'deverified']) }),
  ),
  MachineHeartbeat: payload<MachineHeartbeat>()(machineReliability),
  MachineReliabilityChanged: payload<MachineReliabilityChanged>()(machineReliability),
  VolumeSpaceListed: payload<VolumeSpaceListed>()(
    z.object({
      machineId: id,
      ownerId: id,
      sizeGb: z.number(),
      priceDisk: z.number(),
      endDate: nullable(z.number()),
      listedAt: time,
    }),
  ),
  VolumeSpaceUnlisted: payload<VolumeSpaceUnlisted>()(z.object({ machineId: id, unlistedAt: time })),
  VolumeCreated: payload<VolumeCreated>()(
    z.object({
      volumeId: id,
      ownerId: id,
      machineId: id,
      sizeGb: z.number(),
      name: nullable(z.string()),
      priceDisk: z.number(),
      createdAt: time,
      instanceId: id.optional(),
      cloneOf: z.object({ volumeId: id, machineId: id }).optional(),
    }),
  ),
  VolumeDeleted: payload<VolumeDeleted>()(
    z.object({ volumeId: id, machineId: id, sizeGb: z.number(), deletedAt: time }),
  ),
  VolumeRefused: payload<VolumeRefused>()(
    z.object({
      volumeId: id,
      instanceId: id,
      ownerId: id,
      machineId: id,
      sizeGb: z.number(),
      reason: z.string(),
      at: time,
    }),
  ),
  TemplateCreated: payload<TemplateCreated>()(
    z.object({
      templateId: id,
      hashId: z.string(),
      creatorId: id,
      content: templateContent,
      createdAt: time,
    }),
  ),
  TemplateEdited: payload<TemplateEdited>()(
    z.object({ templateId: id, hashId: z.string(), content: templateContent, editedAt: time }),
  ),
  TemplateDeleted: payload<TemplateDeleted>()(
    z.object({ templateId: id, hashId: z.string(), deletedAt: time }),
  ),
};

const instance = {
  InstanceCreated: payload<InstanceCreated>()(
    z.object({
      instanceId: id,
      renter: id,
      machineId: id,
      hostId: id,
      offerId: id,
      numGpus: z.number().int().positive(),
      gpuName: z.string(),
      dphTotal: z.number(),
      storageDph: z.number().optional(),
      bidPrice: nullable(z.number()),
      label: nullable(z.string()),
      targetState: intendedStatus,
      config: instanceConfig,
      templateId: nullable(id).optional(),
      apiKeyHash: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .optional(),
      defaultJob: z.boolean().optional(),
      createdAt: time,
    }),
  ),
  InstanceStateChanged: payload<InstanceStateChanged>()(
    z.object({
      instanceId: id,
      actualStatus,
      sshHost: nullable(z.string()),
      sshPort: nullable(z.number()),
      ports: z.record(z.string(), z.number()),
      statusMsg: nullable(z.string()),
      at: time,
    }),
  ),
  InstanceIntentChanged: payload<InstanceIntentChanged>()(
    z.object({ instanceId: id, intendedStatus, at: time }),
  ),
  InstanceLabelled: payload<InstanceLabelled>()(z.object({ instanceId: id, label: z.string(), at: time })),
  InstanceConfigUpdated: payload<InstanceConfigUpdated>()(
    z.object({
      instanceId: id,
      changes: z.object({
        image: z.string().optional(),
        env: z.record(z.string(), z.string()).optional(),
        onstart: nullable(z.string()).optional(),
        argsStr: nullable(z.string()).optional(),
        templateHashId: nullable(z.string()).optional(),
      }),
      templateId: id.optional(),
      at: time,
    }),
  ),
  InstanceRestarted: payload<InstanceRestarted>()(
    z.object({ instanceId: id, recycle: z.boolean(), at: time }),
  ),
  InstanceOutbid: payload<InstanceOutbid>()(
    z.object({
      instanceId: id,
      machineId: id,
      numGpus: z.number().int(),
      at: time,
      reason: z.literal('credit').optional(),
    }),
  ),
  InstanceBidChanged: payload<InstanceBidChanged>()(
    z.object({ instanceId: id, price: z.number(), at: time }),
  ),
  InstanceDestroyed: payload<InstanceDestroyed>()(
    z.object({ instanceId: id, renter: id, machineId: id, numGpus: z.number().int(), at: time }),
  ),
  InstanceBillingChanged: payload<InstanceBillingChanged>()(
    z.object({
      instanceId: id,
      renter: id,
      hostId: id,
      machineId: id,
      billing: z.enum(['compute', 'storage', 'none']),
      ratePerHourMicros: z.number().int().nonnegative(),
      at: time,
    }),
  ),
  InstanceVolumeAttached: payload<InstanceVolumeAttached>()(
    z.object({ instanceId: id, volumeId: id, mountPath: z.string(), at: time }),
  ),
  InstanceSshKeyAttached: payload<InstanceSshKeyAttached>()(
    z.object({ instanceId: id, keyId: id, publicKey: z.string().min(1).max(MAX_SSH_KEY_LENGTH), at: time }),
  ),
  InstanceSshKeyDetached: payload<InstanceSshKeyDetached>()(
    z.object({ instanceId: id, keyId: id, at: time }),
  ),
  InstanceSnapshotRequested: payload<InstanceSnapshotRequested>()(
    z.object({ instanceId: id, snapshotId: id, image: z.string().min(1), pause: z.boolean(), at: time }),
  ),
  InstanceSnapshotCompleted: payload<InstanceSnapshotCompleted>()(
    z.object({ instanceId: id, snapshotId: id, image: z.string().min(1), digest: z.string(), at: time }),
  ),
  InstanceSnapshotFailed: payload<InstanceSnapshotFailed>()(
    z.object({ instanceId: id, snapshotId: id, reason: z.string(), at: time }),
  ),
  CloudConnectionListed: payload<CloudConnectionListed>()(
    z.object({ userId: id, connectionId: id, at: time }),
  ),
  CloudConnectionRemoved: payload<CloudConnectionRemoved>()(
    z.object({ userId: id, connectionId: id, at: time }),
  ),
  HostAgentEnrolled: payload<HostAgentEnrolled>()(
    z.object({ machineId: id, ownerId: id, driver: z.string(), at: time }),
  ),
  AgentCopyStarted: payload<AgentCopyStarted>()(
    z.object({ jobId: id, instanceId: id, srcInstanceId: id, totalBytes: nullable(z.number()), at: time }),
  ),
  AgentCopyProgressed: payload<AgentCopyProgressed>()(
    z.object({
      jobId: id,
      instanceId: id,
      bytesCopied: z.number(),
      totalBytes: nullable(z.number()),
      at: time,
    }),
  ),
  AgentCopyCompleted: payload<AgentCopyCompleted>()(
    z.object({ jobId: id, instanceId: id, bytesCopied: z.number(), at: time }),
  ),
  AgentCopyFailed: payload<AgentCopyFailed>()(
    z.object({ jobId: id, instanceId: id, reason: z.string(), at: time }),
  ),
  AgentCopyAborted: payload<AgentCopyAborted>()(
    z.object({ jobId: id, instanceId: id, bytesCopied: z.number(), at: time }),
  ),
  ScheduledCloudCopyDue: payload<ScheduledCloudCopyDue>()(
    z.object({
      jobId: id,
      userId: id,
      dueAt: time,
      call: z.object({ instanceId: id, srcPath: z.string(), dstPath: z.string(), rclone }),
      at: time,
    }),
  ),
  VolumeCopyStarted: payload<VolumeCopyStarted>()(z.object({ volumeId: id, srcVolumeId: id, at: time })),
  VolumeCopyCompleted: payload<VolumeCopyCompleted>()(
    z.object({ volumeId: id, bytesCopied: z.number(), at: time }),
  ),
  VolumeCopyFailed: payload<VolumeCopyFailed>()(z.object({ volumeId: id, reason: z.string(), at: time })),
};

const syncJob = { instanceId: id, jobId: id, at: time };

const sync = {
  MaintenanceScheduled: payload<MaintenanceScheduled>()(
    z.object({
      machineId: id,
      windowId: id,
      ownerId: id,
      startTime: z.number(),
      endTime: z.number(),
      durationHours: z.number(),
      category: z.string(),
      at: time,
    }),
  ),
  MaintenanceCanceled: payload<MaintenanceCanceled>()(
    z.object({ machineId: id, windowIds: z.array(id), at: time }),
  ),
  SyncRequested: payload<SyncRequested>()(
    z.object({
      ...syncJob,
      kind: z.enum(['copy_direct', 'rclone']),
      ownerId: id,
      srcInstanceId: nullable(id),
      srcPath: z.string(),
      dstPath: z.string(),
      rclone: nullable(rclone),
      executor: z.enum(['agents', 'platform']).optional(),
    }),
  ),
  SyncStarted: payload<SyncStarted>()(z.object({ ...syncJob, totalBytes: nullable(z.number()) })),
  SyncProgressed: payload<SyncProgressed>()(
    z.object({ ...syncJob, bytesCopied: z.number(), totalBytes: nullable(z.number()) }),
  ),
  SyncCompleted: payload<SyncCompleted>()(z.object({ ...syncJob, bytesCopied: z.number() })),
  SyncFailed: payload<SyncFailed>()(z.object({ ...syncJob, reason: z.string() })),
  SyncCanceled: payload<SyncCanceled>()(z.object({ ...syncJob, canceledBy: id })),
};

/** The schema of each public event's current payload, per context (the keys of PUBLIC_EVENTS). */
export const PUBLIC_EVENT_SCHEMAS: Record<ContextName, Record<string, z.ZodType>> = {
  identity,
  marketplace,
  instance,
  sync,
};

/** Thrown for an inbound event whose payload does not match its public schema. */
export class InvalidEventError extends Error {
  constructor(
    readonly event: Pick<EventEnvelope, 'eventId' | 'type' | 'context' | 'schemaVersion'>,
    readonly issues: string[],
  ) {
    super(
      `invalid ${event.context} event ${event.type} v${event.schemaVersion} (${event.eventId}): ${issues.join('; ')}`,
    );
    this.name = 'InvalidEventError';
  }
}

/** Each public event type has a schema, and only those (a unit spec and the catalog rely on it). */
export function publicEventsWithoutSchema(): string[] {
  const missing: string[] = [];
  for (const context of Object.keys(PUBLIC_EVENTS) as ContextName[]) {
    for (const type of Object.keys(PUBLIC_EVENTS[context]))
      if (!PUBLIC_EVENT_SCHEMAS[context][type]) missing.push(`${context}/${type}`);
  }
  return missing;
}

/**
 * Checks an inbound public event (upcast to its current version) against its schema; throws
 * InvalidEventError naming each mismatching field. Types without a schema (private events, or a type this
 * build does not know) pass: consumers skip types they do not know.
 */
export function assertValidEvent(envelope: EventEnvelope): void {
  const schema = PUBLIC_EVENT_SCHEMAS[envelope.context]?.[envelope.type];
  if (!schema) return;
  const result = schema.safeParse(envelope.data);
  if (result.success) return;
  throw new InvalidEventError(
    envelope,
    result.error.issues.map((issue) => `${issue.path.join('.') || '(payload)'}: ${issue.message}`),
  );
}
