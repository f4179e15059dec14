import { randomBytes } from 'node:crypto';
import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ApiError, type InstanceConfig, MONEY_LIMITS, type RegistryLoginBox } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { hashKey, QUOTAS, refuseOverQuota } from '@rigmarket/http-kit';
import type { HostDriver } from '../../host/host-driver';
import {
  HOST_DRIVER,
  INSTANCE_RUNTIME,
  PENDING_KEY_BOX,
  REGISTRY_LOGIN_BOX,
} from '../../instance-lifecycle.tokens';
import { findTemplate } from '../../read-models/market-templates/queries';
import { refuseUnlessPositive } from '../account-credit';
import { ALLOCATION_ATTEMPTS, checkBidBound, runInstanceCommand } from '../instance-commands';
import { kickAfterCommit } from '../../host/host-commands';
import type { PendingKeyBox } from '../pending-keys';
import { refuseInMaintenance } from '../sync-maintenance-notices';
import { checkVolume, readRentChecks, refuseIfUnavailable, templateLogin } from './create-checks';
import { CreateInstanceCommand, type CreatedInstance, offerParts } from './create-instance.command';
import { instanceConfig } from './template-merge';
import { IdempotencyRecords, requestHash } from './idempotency';
import { Provisioning } from './provisioning';

/**
 * Accepting an offer: resolve the machine and template from instance-lifecycle's own read models and
 * merge; then, in one transaction, allocate the GPUs on the machine's allocation stream (refused when
 * taken), create the instance with its instance key and record the provisioning workflow; the host driver
 * gets its provision command after the commit.
 */
@CommandHandler(CreateInstanceCommand)
export class CreateInstanceHandler implements ICommandHandler<CreateInstanceCommand> {
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
    defaultJob,
  }: CreateInstanceCommand): Promise<CreatedInstance> {
    const hash = requestHash(offerId, request);
    const idempotency = new IdempotencyRecords(this.runtime);
    if (idempotencyKey !== null) {
      const prior = await idempotency.prior(renter, idempotencyKey, hash);
      if (prior) return prior;
      await idempotency.forget(renter, idempotencyKey);
    }
    const { machineId, numGpus } = offerParts(offerId);
    // Balance, quota, machine and maintenance read in one query, decided in this order; the id drawn with them.
    const checks = await readRentChecks(this.runtime.db, renter, machineId, this.runtime.runner.clock.now());
    // Before anything else: an account at or below $0 rents nothing (docs/instances.md, Credit).
    refuseUnlessPositive(checks.balanceMicros, 'renting');
    refuseOverQuota(QUOTAS.instances, checks.instancesHeld);
    const machine = checks.machine;
    if (!machine || numGpus < 1 || numGpus > machine.numGpus)
      throw ApiError.notFound(`No such offer ${offerId}`, 'no_such_offer');
    if (defaultJob && machine.ownerId !== renter)
      throw ApiError.notFound('no such machine id', 'no_such_machine');
    if (!defaultJob && (!machine.listed || !machine.ask))
      throw ApiError.conflict(`Offer ${offerId} is no longer available; search again`, 'offer_unavailable');
    if (request.cancelUnavail)
      await refuseIfUnavailable(this.runtime, this.host, machineId, offerId, request);
    refuseInMaintenance(checks.maintenanceUntil, machineId, offerId);
    // A default job may run on an unlisted machine: its disk is then priced at 0.
    const ask = machine.ask ?? { priceGpu: 0, priceDisk: 0, minBid: 0 };
    if (request.price !== null) checkBidBound(request.price, numGpus);
    if (!defaultJob && request.price !== null && request.price < ask.minBid * numGpus) {
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
      template = {
        ...found.content,
        ...templateLogin(this.registryLogins, found, renter),
        hashId: found.hashId,
      };
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
    // priceDisk is $/GB/month; a month is 720 hours, as in the marketplace's offer search.
    const storageDph = (ask.priceDisk * config.disk) / 720;
    const dphTotal = request.price ?? ask.priceGpu * numGpus + storageDph;
    const { instanceId } = checks;

    // The rent as a workflow (provisioning.workflow.ts) recorded whole in the creating transaction: the GPUs
    // allocated and the instance created in one append, or nothing at all.
    const provisioning = new Provisioning(this.runtime, {
      instanceId,
      renter,
      machineId,
      numGpus,
      machineGpus: machine.numGpus,
      bid: request.price,
    });
    let outbid = 0;
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
          apiKeyHash: hashKey(instanceApiKey),
          ...(defaultJob ? { defaultJob } : {}),
        },
        metadata,
        {
          // The 201 needs only the inline read models (instances, instance keys): the other contexts learn
          // of the instance and its allocation from the relay, in the background.
          awaitPublication: false,
          // Its id was just drawn: the stream is not read (the fold starts from the initial state).
          newStream: true,
          // Renters of one machine contend on its allocation stream: each conflict decides again.
          maxAttempts: ALLOCATION_ATTEMPTS,
          // Its provision command (host_commands) carries the key sealed, or, waiting for its volume, its
          // pending provision until the volume exists (VolumeForInstanceReactor): never in the clear.
          sealedInstanceKey: this.pendingKeys.seal(instanceApiKey, instanceId),
          sealedImageLogin:
            imageLogin === null ? undefined : this.pendingKeys.sealLogin(imageLogin, instanceId),
          // The instance key exists exactly when the instance does: its row rides in that statement.
          instanceKey: { hash: hashKey(instanceApiKey), ownerId: renter },
          // The GPUs' allocation and the workflow's steps ride in the instance's append.
          alongside: (sql, _decided, now) => provisioning.alongsideInstance(sql, now),
          alsoInTransaction: async (sql, events) => {
            outbid = await provisioning.markOutbid(sql, metadata);
            if (idempotencyKey === null) return;
            const at = events[0]?.occurredAt ?? this.runtime.runner.clock.now().toISOString();
            await idempotency.record(sql, renter, idempotencyKey, hash, { instanceId, instanceApiKey }, at);
          },
        },
      );
    } catch (error) {
      // Nothing of the rent was written. Of two requests with one Idempotency-Key, the second fails on the
      // record's key: it answers the first's.
      if (idempotencyKey !== null) {
        const twin = await idempotency.prior(renter, idempotencyKey, hash);
        if (twin) return twin;
      }
      throw error;
    }
    if (outbid > 0) kickAfterCommit(this.runtime);
    return { instanceId, instanceApiKey };
  }
}
