import { Logger } from '@nestjs/common';
import {
  ApiError,
  decimalToMicros,
  type RegistryLoginBox,
  type TemplateContent,
  templateLoginScope,
} from '@rigmarket/contracts';
import type { ContextRuntime, Sql } from '@rigmarket/event-sourcing';
import type { HostDriver } from '../../host/host-driver';
import { ACCOUNT_CREDIT_TABLE } from '../../read-models/account-credit/queries';
import {
  type MachineRecord,
  type MachineRow,
  machineRecord,
} from '../../read-models/market-machines/queries';
import { volumeOfferFreeGb } from '../../read-models/market-volume-offers/queries';
import { findVolume } from '../../read-models/market-volumes/queries';
import { SCHEMA } from '../../schema';
import { maintenanceEnd, maintenanceEndSql, maintenanceUntil } from '../sync-maintenance-notices';
import type { CreateRequest } from './create-request';
import { DEFAULT_NEW_VOLUME_GB } from './template-merge';

/** The checks of a rent that read instance-lifecycle's read models, before anything is allocated. */

const logger = new Logger('instance-lifecycle');

/**
 * A template's registry credentials serve its creator's own instances only (docs/marketplace.md,
 * "Registry credentials"): another renter of a public template gets none of them, and brings their own
 * image_login when the image needs one.
 */
export function templateLogin(
  registryLogins: RegistryLoginBox,
  found: { templateId: number; creatorId: number; content: TemplateContent },
  renter: number,
): Pick<TemplateContent, 'docker_login_user' | 'docker_login_pass' | 'docker_login_repo'> {
  const none = { docker_login_user: '', docker_login_pass: '', docker_login_repo: '' };
  if (found.creatorId !== renter || !found.content.docker_login_user) return none;
  const pass = registryLogins.open(found.content.docker_login_pass, templateLoginScope(found.templateId));
  if (pass === null) {
    logger.warn(
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

/** What a rent checks before anything else: the renter's balance and live instances, the machine, its maintenance. */
export interface RentChecks {
  balanceMicros: number;
  instancesHeld: number;
  machine: MachineRecord | null;
  /** The end of the maintenance window the machine is in now (ISO), or null. */
  maintenanceUntil: string | null;
  /**
   * The id the instance will have, drawn from `instance_ids` in the same statement (one round trip fewer per
   * rent). A refused rent leaves it unused: ids have gaps anyway (a rent whose GPUs are taken burns one too).
   */
  instanceId: number;
}

/**
 * The rent's first checks read in one query (one round trip, one snapshot), decided by the handler in
 * order, with the new instance's id drawn.
 */
export async function readRentChecks(
  sql: Pick<Sql, 'query'>,
  renter: number,
  machineId: number,
  now: Date,
): Promise<RentChecks> {
  const [row] = await sql.query<{
    balance: string | null;
    held: string | number;
    machine: MachineRow | string | null;
    maintenance_end: number | string | null;
    instance_id: string;
  }>(
    `SELECT (SELECT balance FROM ${ACCOUNT_CREDIT_TABLE} WHERE user_id = $1) AS balance,
            (SELECT count(*) FROM ${SCHEMA}.instances WHERE owner_id = $1 AND NOT destroyed) AS held,
            (SELECT row_to_json(m) FROM ${SCHEMA}.market_machines m WHERE m.machine_id = $2) AS machine,
            ${maintenanceEndSql('$2', '$3')} AS maintenance_end,
            nextval('${SCHEMA}.instance_ids')::text AS instance_id`,
    [renter, machineId, now.getTime() / 1000],
  );
  const machine =
    typeof row?.machine === 'string' ? (JSON.parse(row.machine) as MachineRow) : (row?.machine ?? null);
  return {
    balanceMicros: row?.balance == null ? 0 : decimalToMicros(row.balance),
    instancesHeld: Number(row?.held ?? 0),
    machine: machine ? machineRecord(machine) : null,
    maintenanceUntil: maintenanceEnd(row?.maintenance_end ?? null),
    instanceId: Number(row!.instance_id),
  };
}

/** cancel_unavail: fail at once, before anything is allocated, when the instance could not start right now. */
export async function refuseIfUnavailable(
  runtime: ContextRuntime,
  host: HostDriver,
  machineId: number,
  offerId: number,
  request: CreateRequest,
): Promise<void> {
  const until = await maintenanceUntil(runtime.db, machineId, runtime.runner.clock.now());
  const why =
    (until !== null ? `machine ${machineId} is in maintenance until ${until}` : null) ??
    (await host.unavailableReason(machineId)) ??
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

/**
 * volume_info: a linked volume must exist, be the renter's and live on the instance's machine (local
 * volumes). create_new: the volume offer (id = its machine's id) must be the offer's machine's and have the
 * space, as far as instance-lifecycle knows; marketplace has the last word when it creates the volume.
 */
export async function checkVolume(
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
