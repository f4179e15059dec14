import type { InstanceActualStatus, InstanceConfig, InstanceIntendedStatus } from '@rigmarket/contracts';
import type { InstanceDetails } from '../../read-models/instances/projection';
import { billingClassOf } from '../instance.decider';

export interface InstanceRowRecord {
  instance_id: number;
  owner_id: number;
  machine_id: number;
  actual_status: string | null;
  intended_status: string;
  label: string | null;
  gpu_name: string;
  num_gpus: number;
  dph_total: number;
  start_date: number;
  destroyed: boolean;
  details: InstanceDetails | string;
  /** The machine's verification, GPU RAM and address (joined from market_machines: instance-rows.ts). */
  verification?: string;
  machine_gpu_ram?: number | null;
  machine_public_ipaddr?: string | null;
  /** The machine's listing end date (epoch seconds): the contract's end. */
  machine_end_date?: number | null;
}

/** Transitions the caller may ask for now (PUT state, label, DELETE). */
export function actionsFor(actual: InstanceActualStatus, intended: InstanceIntendedStatus): string[] {
  if (actual === 'exited' || actual === 'unknown' || actual === 'offline') return ['label', 'destroy'];
  return intended === 'running' ? ['stop', 'label', 'destroy'] : ['start', 'label', 'destroy'];
}

const DEAD_MESSAGES: Record<string, string> = {
  exited:
    'The container exited; it will not reach running again. Destroy the instance and rent another offer.',
  unknown:
    'No heartbeat from the host; the instance will not reach running again. Destroy it and rent another offer.',
  offline:
    'The host is disconnected; the instance will not reach running again. Destroy it and rent another offer.',
};

/** The status_msg shown: the host's, or for a dead instance what to do about it. */
export function statusMessageFor(actual: InstanceActualStatus, statusMsg: string | null): string | null {
  return actual && DEAD_MESSAGES[actual] ? (statusMsg ?? DEAD_MESSAGES[actual]) : statusMsg;
}

/** Billing per state (the decider's rule): compute while meant to run and running, storage otherwise. */
export function billingFor(
  actual: InstanceActualStatus,
  intended: InstanceIntendedStatus,
): { compute: boolean; storage: boolean } {
  return { compute: billingClassOf(actual, intended, false) === 'compute', storage: true };
}

/** The linked or created volume; while a create_new volume is being made, volume_id is null and the offer is named. */
function volumeInfo(config: InstanceConfig) {
  if (config.volume) return { volume_id: config.volume.volumeId, mount_path: config.volume.mountPath };
  const wanted = config.newVolume;
  return wanted
    ? {
        volume_id: null,
        create_new: true,
        volume_offer_id: wanted.volumeOfferId,
        size: wanted.sizeGb,
        mount_path: wanted.mountPath,
      }
    : null;
}

/** One instance row as the CLI's tables read it (docs/client-compat.md 2.3/2.4: start_date number, extra_env pairs). */
export function instanceView(row: InstanceRowRecord) {
  const details =
    typeof row.details === 'string' ? (JSON.parse(row.details) as InstanceDetails) : row.details;
  const actual = row.actual_status as InstanceActualStatus;
  const intended = row.intended_status as InstanceIntendedStatus;
  const config = details.config;
  const gpuRam = Number(row.machine_gpu_ram ?? details.gpuRam ?? 0);
  // args keeps the image's own ENTRYPOINT: no SSH (nor Jupyter) to advertise, whatever the host reports.
  const ssh = config.runtype !== 'args';
  const ports = Object.fromEntries(
    Object.entries(details.ports ?? {}).map(([k, hostPort]) => [
      k,
      [{ HostIp: '0.0.0.0', HostPort: String(hostPort) }],
    ]),
  );
  return {
    id: Number(row.instance_id),
    actual_status: actual,
    intended_status: intended,
    cur_state: intended,
    next_state: intended,
    // The spec's type: a string, "" when the instance was never labelled.
    label: row.label ?? '',
    image: config.image,
    image_uuid: config.image,
    image_runtype: config.runtype,
    image_args: config.args ?? [],
    args_str: config.argsStr,
    onstart: config.onstart,
    template_hash_id: config.templateHashId,
    jupyter_token: null,
    ssh_host: ssh ? details.sshHost : null,
    ssh_port: ssh ? details.sshPort : null,
    ssh_idx: null,
    ports,
    public_ipaddr: row.machine_public_ipaddr ?? details.publicIpaddr ?? null,
    start_date: Number(row.start_date),
    // The contract ends when the machine's listing does (the CLI's default end of a scheduled cloud copy).
    end_date: row.machine_end_date ?? null,
    duration: null,
    extra_env: Object.entries(config.env).filter(([k]) => !k.startsWith('-')),
    machine_id: Number(row.machine_id),
    host_id: details.hostId,
    num_gpus: Number(row.num_gpus),
    gpu_name: row.gpu_name,
    verification: row.verification ?? 'unverified',
    gpu_ram: gpuRam,
    gpu_totalram: gpuRam * Number(row.num_gpus),
    gpu_util: null,
    dph_total: Number(row.dph_total),
    is_bid: details.bidPrice !== null,
    disk_space: config.disk,
    vm: config.vm ?? false,
    volume_info: volumeInfo(config),
    status_msg: statusMessageFor(actual, details.statusMsg),
    // The last snapshot (take snapshot): running, done or failed, and what it did or why it failed.
    snapshot_status: details.snapshot?.status ?? null,
    snapshot_msg: details.snapshot?.msg ?? null,
    snapshot_image: details.snapshot?.image ?? null,
    snapshot_digest: details.snapshot?.digest ?? null,
    actions: actionsFor(actual, intended),
    billing: billingFor(actual, intended),
  };
}

export type InstanceView = ReturnType<typeof instanceView>;
