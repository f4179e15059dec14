import { randomBytes } from 'node:crypto';
import { Inject, Logger } from '@nestjs/common';
import {
  Command,
  CommandHandler,
  type ICommandHandler,
  type IQueryHandler,
  Query,
  QueryHandler,
} from '@nestjs/cqrs';
import {
  ApiError,
  type EventEnvelope,
  type EventMetadata,
  type InstanceConfig,
  type InstanceEvent,
  type InstanceIntendedStatus,
  MONEY_LIMITS,
  type RegistryLoginBox,
  type TemplateContent,
  templateLoginScope,
} from '@rigmarket/contracts';
import {
  type ContextRuntime,
  type CommandBody,
  type HandleOptions,
  type Sql,
  applyProjection,
} from '@rigmarket/event-sourcing';
import { hashKey, QUOTAS, enforceQuota } from '@rigmarket/http-kit';
import { allocationDecider, allocationStreamId } from '../allocation/allocation.decider';
import { type HostCommandOptions, kickAfterCommit, writeHostCommands } from '../host/host-commands';
import type { HostDriver } from '../host/host-driver';
import {
  INSTANCE_MACHINE_COLUMNS,
  INSTANCE_VERIFICATION,
  findMachine,
} from '../read-models/market-machines/queries';
import { findTemplate } from '../read-models/market-templates/queries';
import { SCHEMA } from '../schema';
import {
  HOST_DRIVER,
  INSTANCE_RUNTIME,
  PENDING_KEY_BOX,
  REGISTRY_LOGIN_BOX,
} from '../instance-lifecycle.tokens';
import { requirePositiveBalance } from './account-credit';
import { type CreateRequest, DEFAULT_NEW_VOLUME_GB, instanceConfig } from './create-request';
import { IdempotencyRecords, requestHash } from './idempotency';
import type { PendingKeyBox } from './pending-keys';
import { volumeOfferFreeGb } from '../read-models/market-volume-offers/queries';
import { findVolume } from '../read-models/market-volumes/queries';
import {
  type InstanceCommand,
  type InstanceState,
  instanceDecider,
  instanceStreamId,
} from './instance.decider';
import { encodeToken, parseListQuery } from './instance-list';
import { type InstanceRowRecord, type InstanceView, instanceView } from './instance-view';
import {
  maintenanceUntil,
  refuseDuringMaintenance,
  withSyncAndMaintenance,
} from './sync-maintenance-notices';

type InstanceCommandBody = CommandBody<InstanceCommand>;

/**
 * Runs one command on an instance's stream; the host commands its events call for are written in the
 * same transaction (host_commands) and delivered after the commit by HostCommandDispatcher.
 */
export async function runInstanceCommand(
  runtime: ContextRuntime,
  instanceId: number,
  command: InstanceCommandBody,
  metadata: EventMetadata,
  options: HandleOptions<InstanceState, InstanceEvent> & HostCommandOptions = {},
) {
  let written = 0;
  const result = await runtime.runner.run(instanceStreamId(instanceId), instanceDecider, command, metadata, {
    ...options,
    alsoInTransaction: async (sql, envelopes, before, decided) => {
      await options.alsoInTransaction?.(sql, envelopes, before, decided);
      written = await writeHostCommands(sql, before, envelopes, decided, options);
    },
  });
  if (written > 0) kickAfterCommit(runtime);
  return result;
}

/**
 * The same, inside a transaction the caller holds (an outbid is decided on the allocation stream and
 * marked on the instance's in one transaction). A concurrent append to the instance's stream makes the
 * whole transaction retry (WrongExpectedVersion).
 */
export async function runInstanceCommandIn(
  runtime: ContextRuntime,
  sql: Sql,
  instanceId: number,
  command: InstanceCommandBody,
  metadata: EventMetadata,
  now: Date,
): Promise<EventEnvelope[]> {
  const streamId = instanceStreamId(instanceId);
  const history = await runtime.store.readStream(sql, streamId);
  const before = history.reduce(
    (s, e) => instanceDecider.evolve(s, { type: e.type, data: e.data } as InstanceEvent),
    instanceDecider.initialState(),
  );
  const events = instanceDecider.decide({ ...command, at: now.toISOString() } as InstanceCommand, before);
  if (events.length === 0) return [];
  const envelopes = await runtime.store.append(sql, streamId, history.length, events, metadata, now);
  for (const envelope of envelopes)
    for (const projection of runtime.definition.inlineProjections)
      await applyProjection(sql, runtime.schema, projection, envelope);
  await writeHostCommands(sql, before, envelopes, events);
  return envelopes;
}

/** Offer id = machine_id * 1000 + num_gpus (docs/marketplace.md). */
export const offerParts = (offerId: number) => ({
  machineId: Math.floor(offerId / 1000),
  numGpus: offerId % 1000,
});

export interface CreatedInstance {
  instanceId: number;
  instanceApiKey: string;
}

export class CreateInstanceCommand extends Command<CreatedInstance> {
  constructor(
    readonly renter: number,
    readonly offerId: number,
    readonly request: CreateRequest,
    readonly metadata: EventMetadata,
    /** The Idempotency-Key header, if any. */
    readonly idempotencyKey: string | null = null,
  ) {
    super();
  }
}

/**
 * Accepting an offer: resolve the machine and template from instance-lifecycle's own read models,
 * merge, allocate the GPUs on the machine's allocation stream (refused when taken), then create the
 * instance with its instance key in one transaction, and hand it to the host driver.
 */
@CommandHandler(CreateInstanceCommand)
export class CreateInstanceHandler implements ICommandHandler<CreateInstanceCommand> {
  private readonly logger = new Logger('instance-lifecycle');
  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(HOST_DRIVER) private readonly host: HostDriver,
    @Inject(PENDING_KEY_BOX) private readonly pendingKeys: PendingKeyBox,
    @Inject(REGISTRY_LOGIN_BOX) private readonly registryLogins: RegistryLoginBox,
  ) {}

  async execute({
    renter,
    offerId,
    request,
    metadata,
    idempotencyKey,
  }: CreateInstanceCommand): Promise<CreatedInstance> {
    const hash = requestHash(offerId, request);
    const idempotency = new IdempotencyRecords(this.runtime);
    if (idempotencyKey !== null) {
      const prior = await idempotency.prior(renter, idempotencyKey, hash);
      if (prior) return prior;
      await idempotency.forget(renter, idempotencyKey);
    }
    // Before anything else: an account at or below $0 rents nothing (docs/instances.md, Credit).
    await requirePositiveBalance(this.runtime.db, renter, 'renting');
    await enforceQuota(
      this.runtime.db,
      QUOTAS.instances,
      `SELECT count(*) AS n FROM ${this.runtime.schema}.instances WHERE owner_id = $1 AND NOT destroyed`,
      [renter],
    );
    const { machineId, numGpus } = offerParts(offerId);
    const machine = await findMachine(this.runtime.db, machineId);
    if (!machine || numGpus < 1 || numGpus > machine.numGpus)
      throw ApiError.notFound(`No such offer ${offerId}`, 'no_such_offer');
    if (!machine.listed || !machine.ask)
      throw ApiError.conflict(`Offer ${offerId} is no longer available; search again`, 'offer_unavailable');
    if (request.cancelUnavail) await this.refuseIfUnavailable(machineId, offerId, request);
    await refuseDuringMaintenance(this.runtime.db, machineId, offerId, this.runtime.runner.clock.now());
    const ask = machine.ask;
    if (request.price !== null) checkBidBound(request.price, numGpus);
    if (request.price !== null && request.price < ask.minBid * numGpus) {
      throw ApiError.badRequest(
        `price ${request.price} is below this offer's minimum bid of ${ask.minBid * numGpus} $/hour`,
      );
    }
    let template = null;
    let templateId: number | null = null;
    if (request.templateHashId !== null) {
      const found = await findTemplate(this.runtime.db, request.templateHashId);
      if (!found || (found.content.private && found.creatorId !== renter))
        throw ApiError.notFound(`No template with hash_id ${request.templateHashId}`, 'no_such_template');
      template = { ...found.content, ...this.templateLogin(found, renter), hashId: found.hashId };
      templateId = found.templateId;
    }
    // The registry login goes to the host with the provision command only (sealed in host_commands until
    // delivered): the InstanceCreated event (outbox, Kafka), the read model and every API response carry none.
    const { imageLogin, ...publicConfig } = instanceConfig(request, template);
    const config: InstanceConfig = { ...publicConfig, imageLogin: null };
    if (!(config.disk > 0 && config.disk <= MONEY_LIMITS.diskGb))
      throw ApiError.badRequest(
        `disk must be a positive number of GB, at most ${MONEY_LIMITS.diskGb.toLocaleString('en-US')} (the template's recommended_disk_space is ${config.disk})`,
      );
    if (config.vm && !machine.vmsEnabled) {
      throw new ApiError(
        400,
        'vm_unsupported',
        `Machine ${machineId} runs containers only (vms_enabled is false); rent an offer with vms_enabled=true or leave vm out`,
      );
    }
    await checkVolume(this.runtime, renter, machineId, request.volume);
    const waitsForVolume = Boolean(config.newVolume);
    // priceDisk is $/GB/month; a month is 720 hours, as in the marketplace's offer search.
    const storageDph = (ask.priceDisk * config.disk) / 720;
    const dphTotal = request.price ?? ask.priceGpu * numGpus + storageDph;
    const instanceId = await this.runtime.nextId('instance_ids');

    await allocateGpus(
      this.runtime,
      { machineId, instanceId, numGpus, machineGpus: machine.numGpus, bid: request.price },
      metadata,
    );

    const instanceApiKey = randomBytes(32).toString('hex');
    try {
      await runInstanceCommand(
        this.runtime,
        instanceId,
        {
          type: 'CreateInstance',
          instanceId,
          renter,
          machineId,
          hostId: machine.ownerId,
          offerId,
          numGpus,
          gpuName: machine.gpuName,
          dphTotal,
          storageDph,
          bidPrice: request.price,
          label: request.label,
          targetState: request.targetState,
          config,
          templateId,
        },
        metadata,
        {
          // Its provision command (host_commands) carries the key sealed; one waiting for its volume gets it later.
          ...(waitsForVolume
            ? {}
            : {
                sealedInstanceKey: this.pendingKeys.seal(instanceApiKey, instanceId),
                sealedImageLogin:
                  imageLogin === null ? undefined : this.pendingKeys.sealLogin(imageLogin, instanceId),
              }),
          // The instance key exists exactly when the instance does.
          alsoInTransaction: async (sql, events) => {
            await sql.execute(
              `INSERT INTO ${SCHEMA}.instance_keys (key_hash, instance_id, owner_id) VALUES ($1, $2, $3)`,
              [hashKey(instanceApiKey), instanceId, renter],
            );
            // Provisioned later (VolumeForInstanceReactor), when the volume exists: the host needs the key then.
            // Sealed (PendingKeyBox): the key is never stored in the clear.
            if (waitsForVolume) {
              await sql.execute(
                `INSERT INTO ${SCHEMA}.pending_provisions (instance_id, instance_api_key_sealed, image_login_sealed) VALUES ($1, $2, $3)`,
                [
                  instanceId,
                  this.pendingKeys.seal(instanceApiKey, instanceId),
                  imageLogin === null ? null : this.pendingKeys.sealLogin(imageLogin, instanceId),
                ],
              );
            }
            if (idempotencyKey === null) return;
            const at = events[0]?.occurredAt ?? this.runtime.runner.clock.now().toISOString();
            await idempotency.record(sql, renter, idempotencyKey, hash, { instanceId, instanceApiKey }, at);
          },
        },
      );
    } catch (error) {
      await releaseGpus(this.runtime, machineId, instanceId, metadata);
      if (idempotencyKey !== null) {
        const twin = await idempotency.prior(renter, idempotencyKey, hash);
        if (twin) return twin;
      }
      throw error;
    }
    return { instanceId, instanceApiKey };
  }

  /**
   * A template's registry credentials serve its creator's own instances only (docs/marketplace.md,
   * "Registry credentials"): another renter of a public template gets none of them, and brings their own
   * image_login when the image needs one.
   */
  private templateLogin(
    found: { templateId: number; creatorId: number; content: TemplateContent },
    renter: number,
  ): Pick<TemplateContent, 'docker_login_user' | 'docker_login_pass' | 'docker_login_repo'> {
    const none = { docker_login_user: '', docker_login_pass: '', docker_login_repo: '' };
    if (found.creatorId !== renter || !found.content.docker_login_user) return none;
    const pass = this.registryLogins.open(
      found.content.docker_login_pass,
      templateLoginScope(found.templateId),
    );
    if (pass === null) {
      this.logger.warn(
        `template ${found.templateId}: its registry password does not open with this RIGMARKET_REGISTRY_KEY; the image is pulled without it`,
      );
      return none;
    }
    return {
      docker_login_user: found.content.docker_login_user,
      docker_login_pass: pass,
      docker_login_repo: found.content.docker_login_repo,
    };
  }

  /** cancel_unavail: fail at once, before anything is allocated, when the instance could not start right now. */
  private async refuseIfUnavailable(
    machineId: number,
    offerId: number,
    request: CreateRequest,
  ): Promise<void> {
    const until = await maintenanceUntil(this.runtime.db, machineId, this.runtime.runner.clock.now());
    const why =
      (until !== null ? `machine ${machineId} is in maintenance until ${until}` : null) ??
      (await this.host.unavailableReason(machineId)) ??
      (request.volume?.createNew
        ? `it would wait for its new volume to be created (create the volume first and link it, or leave cancel_unavail out)`
        : null);
    if (why !== null) {
      throw new ApiError(
        409,
        'instance_unavailable',
        `Offer ${offerId} cannot start an instance now: ${why}. Nothing was rented (cancel_unavail).`,
      );
    }
  }
}

/** A bid is at most MONEY_LIMITS.gpuPricePerHour per GPU of the offer (docs/api.md "Limits"). */
function checkBidBound(price: number, numGpus: number): void {
  const max = MONEY_LIMITS.gpuPricePerHour * numGpus;
  if (price > max)
    throw new ApiError(
      400,
      'invalid_amount',
      `price must be at most ${MONEY_LIMITS.gpuPricePerHour.toLocaleString('en-US')} $/hour per GPU (${max.toLocaleString('en-US')} $/hour for ${numGpus} GPU${numGpus === 1 ? '' : 's'}; got ${price})`,
      { field: 'price', max },
    );
}

/**
 * volume_info: a linked volume must exist, be the renter's and live on the instance's machine (local
 * volumes). create_new: the volume offer (id = its machine's id) must be the offer's machine's and have the
 * space, as far as instance-lifecycle knows; marketplace has the last word when it creates the volume.
 */
async function checkVolume(
  runtime: ContextRuntime,
  renter: number,
  machineId: number,
  volume: CreateRequest['volume'],
): Promise<void> {
  if (volume === null) return;
  if (volume.createNew) {
    const sizeGb = volume.sizeGb ?? DEFAULT_NEW_VOLUME_GB;
    const free = await volumeOfferFreeGb(
      runtime.db,
      volume.volumeId,
      runtime.runner.clock.now().getTime() / 1000,
    );
    if (free === null)
      throw ApiError.notFound(
        `No volume offer ${volume.volumeId}; search them with POST /api/v0/volumes/search/`,
        'no_such_volume_offer',
      );
    if (volume.volumeId !== machineId) {
      throw new ApiError(
        400,
        'volume_on_other_machine',
        `Volume offer ${volume.volumeId} is on machine ${volume.volumeId}; a local volume must be created on the instance's machine ${machineId}`,
      );
    }
    if (sizeGb > free)
      throw new ApiError(
        400,
        'insufficient_space',
        `Volume offer ${volume.volumeId} has ${free} GB free, not ${sizeGb}; ask for at most ${free} GB`,
      );
    return;
  }
  const found = await findVolume(runtime.db, volume.volumeId);
  if (!found || found.deleted || found.ownerId !== renter) {
    throw ApiError.notFound(
      `Volume ${volume.volumeId} does not exist; a volume must exist before it is linked`,
      'no_such_volume',
    );
  }
  if (found.machineId !== machineId) {
    throw new ApiError(
      400,
      'volume_on_other_machine',
      `Volume ${volume.volumeId} is on machine ${found.machineId}; a local volume can only be linked to an instance on its own machine`,
    );
  }
}

/**
 * Allocates on the machine's stream; instances outbid by it are marked outbid on their own streams in the
 * same transaction (their stop goes to host_commands with it): a crash never leaves an outbid instance
 * shown as running while another holds its GPUs.
 */
async function allocateGpus(
  runtime: ContextRuntime,
  a: { machineId: number; instanceId: number; numGpus: number; machineGpus: number; bid: number | null },
  metadata: EventMetadata,
): Promise<void> {
  let marked = 0;
  await runtime.runner.run(
    allocationStreamId(a.machineId),
    allocationDecider,
    { type: 'AllocateGpus', ...a },
    metadata,
    {
      maxAttempts: 100,
      alsoInTransaction: async (sql, events) => {
        marked = 0;
        for (const event of events) {
          const data = event.data as { instanceId: number; outbid?: boolean };
          if (event.type !== 'GpusReleased' || !data.outbid) continue;
          const at = new Date(event.occurredAt);
          marked += (
            await runInstanceCommandIn(runtime, sql, data.instanceId, { type: 'MarkOutbid' }, metadata, at)
          ).length;
        }
      },
    },
  );
  if (marked > 0) kickAfterCommit(runtime);
}

export async function releaseGpus(
  runtime: ContextRuntime,
  machineId: number,
  instanceId: number,
  metadata: EventMetadata,
): Promise<void> {
  await runtime.runner.run(
    allocationStreamId(machineId),
    allocationDecider,
    { type: 'ReleaseGpus', machineId, instanceId },
    metadata,
    { maxAttempts: 100 },
  );
}

export const isWaitingForVolume = (state: InstanceState): boolean =>
  state.status === 'active' && state.pendingVolume !== null;

export interface InstanceChanges {
  state?: InstanceIntendedStatus;
  label?: string;
}

export class ChangeInstanceCommand extends Command<void> {
  constructor(
    readonly requesterId: number,
    readonly instanceId: number,
    readonly changes: InstanceChanges,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(ChangeInstanceCommand)
export class ChangeInstanceHandler implements ICommandHandler<ChangeInstanceCommand> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({ requesterId, instanceId, changes, metadata }: ChangeInstanceCommand): Promise<void> {
    if (changes.label !== undefined) {
      await runInstanceCommand(
        this.runtime,
        instanceId,
        { type: 'LabelInstance', requesterId, label: changes.label },
        metadata,
      );
    }
    if (changes.state === 'running') {
      await requirePositiveBalance(this.runtime.db, requesterId, 'starting an instance');
      await this.reallocateIfOutbid(requesterId, instanceId, metadata);
    }
    if (changes.state !== undefined) {
      // Its host is told through host_commands (an instance waiting for its volume is provisioned later).
      await runInstanceCommand(
        this.runtime,
        instanceId,
        { type: 'SetIntendedState', requesterId, state: changes.state },
        metadata,
      );
    }
  }

  /** An outbid instance holds no GPUs: starting it takes them again at its bid (which may outbid others). */
  private async reallocateIfOutbid(
    requesterId: number,
    instanceId: number,
    metadata: EventMetadata,
  ): Promise<void> {
    const { state } = await this.runtime.runner.load(instanceStreamId(instanceId), instanceDecider);
    if (state.status !== 'active' || state.renter !== requesterId || !state.outbid) return;
    const machine = await findMachine(this.runtime.db, state.machineId);
    if (!machine)
      throw ApiError.conflict(
        'The machine is gone; destroy the instance and rent another offer',
        'offer_unavailable',
      );
    await allocateGpus(
      this.runtime,
      {
        machineId: state.machineId,
        instanceId,
        numGpus: state.numGpus,
        machineGpus: machine.numGpus,
        bid: state.bidPrice,
      },
      metadata,
    );
  }
}

export class RestartInstanceCommand extends Command<void> {
  constructor(
    readonly requesterId: number,
    readonly instanceId: number,
    readonly recycle: boolean,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/** Reboot and recycle (docs/client-compat.md 2.5): the host restarts or recreates the container. */
@CommandHandler(RestartInstanceCommand)
export class RestartInstanceHandler implements ICommandHandler<RestartInstanceCommand> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({ requesterId, instanceId, recycle, metadata }: RestartInstanceCommand): Promise<void> {
    await runInstanceCommand(
      this.runtime,
      instanceId,
      { type: 'RestartInstance', requesterId, recycle },
      metadata,
    );
  }
}

export class ChangeBidCommand extends Command<void> {
  constructor(
    readonly requesterId: number,
    readonly instanceId: number,
    readonly price: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/** PUT /api/v0/instances/bid_price/{id}/: at least the machine's min bid; a held allocation takes the new bid. */
@CommandHandler(ChangeBidCommand)
export class ChangeBidHandler implements ICommandHandler<ChangeBidCommand> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({ requesterId, instanceId, price, metadata }: ChangeBidCommand): Promise<void> {
    const { state } = await this.runtime.runner.load(instanceStreamId(instanceId), instanceDecider);
    if (state.status === 'active' && state.renter === requesterId) {
      checkBidBound(price, state.numGpus);
      const machine = await findMachine(this.runtime.db, state.machineId);
      const minimum = (machine?.ask?.minBid ?? 0) * state.numGpus;
      if (price < minimum)
        throw ApiError.badRequest(`price ${price} is below this machine's minimum bid of ${minimum} $/hour`);
    }
    await runInstanceCommand(this.runtime, instanceId, { type: 'ChangeBid', requesterId, price }, metadata);
    if (state.status === 'active' && !state.outbid) {
      await this.runtime.runner.run(
        allocationStreamId(state.machineId),
        allocationDecider,
        { type: 'ChangeBid', machineId: state.machineId, instanceId, bid: price },
        metadata,
        { maxAttempts: 100 },
      );
    }
  }
}

export class DestroyInstanceCommand extends Command<void> {
  constructor(
    readonly requesterId: number,
    readonly instanceId: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/** Idempotent: destroying a destroyed instance of one's own succeeds again (the CLI repeats it). */
@CommandHandler(DestroyInstanceCommand)
export class DestroyInstanceHandler implements ICommandHandler<DestroyInstanceCommand> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({ requesterId, instanceId, metadata }: DestroyInstanceCommand): Promise<void> {
    const result = await runInstanceCommand(
      this.runtime,
      instanceId,
      { type: 'DestroyInstance', requesterId },
      metadata,
    );
    const state: InstanceState = result.state;
    if (state.status !== 'destroyed') return;
    await releaseGpus(this.runtime, state.machineId, instanceId, metadata);
  }
}

/** The owner of the instance an instance key opens, or null. */
export class GetInstanceQuery extends Query<InstanceView | null> {
  constructor(
    readonly ownerId: number,
    readonly instanceId: number,
  ) {
    super();
  }
}

@QueryHandler(GetInstanceQuery)
export class GetInstanceHandler implements IQueryHandler<GetInstanceQuery> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute({ ownerId, instanceId }: GetInstanceQuery): Promise<InstanceView | null> {
    const rows = await this.runtime.db.query<InstanceRowRecord>(
      `SELECT *, ${INSTANCE_MACHINE_COLUMNS} FROM ${SCHEMA}.instances WHERE instance_id = $1 AND owner_id = $2 AND NOT destroyed`,
      [instanceId, ownerId],
    );
    return rows[0]
      ? ((
          await withSyncAndMaintenance(
            this.runtime.db,
            [instanceView(rows[0])],
            this.runtime.infra.clock.now(),
          )
        )[0] ?? null)
      : null;
  }
}

export interface InstancePage {
  instances: InstanceView[];
  next_token: string | null;
  total_instances: number;
  label_counts: Record<string, number>;
}

export class ListInstancesQuery extends Query<InstancePage> {
  constructor(
    readonly ownerId: number,
    readonly query: Record<string, unknown>,
  ) {
    super();
  }
}

@QueryHandler(ListInstancesQuery)
export class ListInstancesHandler implements IQueryHandler<ListInstancesQuery> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute({ ownerId, query }: ListInstancesQuery): Promise<InstancePage> {
    const q = parseListQuery(query, ownerId);
    const where = q.where.join(' AND ');
    const rows = await this.runtime.db.query<InstanceRowRecord>(
      `SELECT *, ${INSTANCE_MACHINE_COLUMNS} FROM ${SCHEMA}.instances WHERE ${where} ORDER BY ${q.orderBy} LIMIT ${q.limit + 1} OFFSET ${q.offset}`,
      q.params,
    );
    const [{ n }] = (await this.runtime.db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM ${SCHEMA}.instances WHERE ${where}`,
      q.params,
    )) as [{ n: string }];
    const labels = await this.runtime.db.query<{ label: string; n: string }>(
      `SELECT label, count(*)::text AS n FROM ${SCHEMA}.instances WHERE owner_id = $1 AND NOT destroyed AND label IS NOT NULL GROUP BY label`,
      [ownerId],
    );
    const page = rows.slice(0, q.limit);
    return {
      instances: await withSyncAndMaintenance(
        this.runtime.db,
        page.map(instanceView),
        this.runtime.infra.clock.now(),
      ),
      next_token: rows.length > q.limit ? encodeToken(q.offset + q.limit) : null,
      total_instances: Number(n),
      label_counts: Object.fromEntries(labels.map((l) => [l.label, Number(l.n)])),
    };
  }
}

/** The most instances one GET /api/v0/instances/ lists (far above the per-account quota). */
export const MAX_LISTED_INSTANCES = 10_000;

/**
 * `GET /api/v0/instances/` (the CLI's `show instances`): every live instance of the owner in one query, in
 * the v1 listing's default order, instead of paging through it 25 at a time (each page three more queries).
 */
export class ListAllInstancesQuery extends Query<InstanceView[]> {
  constructor(readonly ownerId: number) {
    super();
  }
}

@QueryHandler(ListAllInstancesQuery)
export class ListAllInstancesHandler implements IQueryHandler<ListAllInstancesQuery> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute({ ownerId }: ListAllInstancesQuery): Promise<InstanceView[]> {
    const q = parseListQuery({}, ownerId);
    const rows = await this.runtime.db.query<InstanceRowRecord>(
      `SELECT *, ${INSTANCE_MACHINE_COLUMNS} FROM ${SCHEMA}.instances WHERE ${q.where.join(' AND ')} ORDER BY ${q.orderBy} LIMIT ${MAX_LISTED_INSTANCES}`,
      q.params,
    );
    return withSyncAndMaintenance(this.runtime.db, rows.map(instanceView), this.runtime.infra.clock.now());
  }
}

export interface InstanceFilterValues {
  actual_status: string | null;
  verification: string;
  gpu_name: string;
}

/** `show instances` (table mode): the distinct values its --status, --verification and --gpu-name filters can take. */
export class InstanceFiltersQuery extends Query<InstanceFilterValues[]> {
  constructor(readonly ownerId: number) {
    super();
  }
}

@QueryHandler(InstanceFiltersQuery)
export class InstanceFiltersHandler implements IQueryHandler<InstanceFiltersQuery> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute({ ownerId }: InstanceFiltersQuery): Promise<InstanceFilterValues[]> {
    return this.runtime.db.query<InstanceFilterValues>(
      `SELECT DISTINCT actual_status, ${INSTANCE_VERIFICATION} AS verification, gpu_name FROM ${SCHEMA}.instances
        WHERE owner_id = $1 AND NOT destroyed ORDER BY 1, 2, 3`,
      [ownerId],
    );
  }
}
