import {
  ApiError,
  MONEY_LIMITS,
  type InstanceIntendedStatus,
  type InstanceRuntype,
} from '@rigmarket/contracts';
import { isJsonObject } from '@rigmarket/http-kit';
import { parseRuntype } from './runtype';

/** The creation fields of the spec, validated; null (the CLI sends every key) means absent. */
export interface CreateRequest {
  image: string | null;
  templateHashId: string | null;
  label: string | null;
  disk: number | null;
  runtype: InstanceRuntype | null;
  targetState: InstanceIntendedStatus;
  price: number | null;
  env: Record<string, string>;
  onstart: string | null;
  argsStr: string | null;
  args: string[] | null;
  useJupyterLab: boolean | null;
  jupyterDir: string | null;
  pythonUtf8: boolean;
  langUtf8: boolean;
  imageLogin: string | null;
  cancelUnavail: boolean;
  extraFilters: Record<string, unknown>;
  vm: boolean;
  volume: VolumeRequest | null;
}

/** volume_info (spec): link an existing volume, or create one from a volume offer (volume_id = the offer's id). */
export interface VolumeRequest {
  createNew: boolean;
  volumeId: number;
  mountPath: string;
  sizeGb: number | null;
  name: string | null;
}

/** The real CLI's rule (vastai/api/instances.py VALID_MOUNT_PATH), made absolute. */
const MOUNT_PATH = /^\/([^/\0]+\/?)+$/;

export function parseVolumeInfo(raw: unknown): VolumeRequest {
  if (!isJsonObject(raw))
    throw ApiError.badRequest(
      'volume_info must be an object such as {"volume_id": 12, "mount_path": "/data"}',
    );
  const volumeId = typeof raw.volume_id === 'string' ? Number(raw.volume_id) : raw.volume_id;
  if (typeof volumeId !== 'number' || !Number.isInteger(volumeId) || volumeId < 1)
    throw ApiError.badRequest('volume_info.volume_id must be a volume id (an integer)');
  const mountPath = raw.mount_path;
  if (typeof mountPath !== 'string' || !MOUNT_PATH.test(mountPath) || mountPath.split('/').includes('..')) {
    throw ApiError.badRequest(
      'volume_info.mount_path must be an absolute path inside the container, such as /data',
    );
  }
  const createNew = raw.create_new === true || raw.create_new === 'true';
  const size = raw.size === undefined || raw.size === null ? null : Number(raw.size);
  if (size !== null && (!Number.isFinite(size) || size <= 0 || size > MONEY_LIMITS.diskGb))
    throw ApiError.badRequest(
      `volume_info.size must be a positive number of GB, at most ${MONEY_LIMITS.diskGb.toLocaleString('en-US')}`,
    );
  if (createNew && size !== null && !Number.isInteger(size))
    throw ApiError.badRequest('volume_info.size must be a whole number of GB for a new volume');
  return {
    createNew,
    volumeId,
    mountPath,
    sizeGb: size,
    name: typeof raw.name === 'string' ? raw.name : null,
  };
}

export const ONSTART_MAX = 4048;
export const DEFAULT_DISK_GB = 8;

const present = (value: unknown): boolean => value !== undefined && value !== null;

function optionalString(body: Record<string, unknown>, key: string): string | null {
  const value = body[key];
  if (!present(value)) return null;
  if (typeof value !== 'string') throw ApiError.badRequest(`${key} must be a string`);
  return value;
}

function optionalBoolean(body: Record<string, unknown>, key: string): boolean | null {
  const value = body[key];
  if (!present(value)) return null;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  throw ApiError.badRequest(`${key} must be a boolean`);
}

function optionalNumber(body: Record<string, unknown>, key: string): number | null {
  const value = body[key];
  if (!present(value) || value === '') return null;
  // The CLI sends numbers as strings at times (docs/client-compat.md 4.4).
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw ApiError.badRequest(`${key} must be a number`);
  return n;
}

export function parseCreateRequest(body: unknown): CreateRequest {
  if (!isJsonObject(body)) throw ApiError.badRequest('The body must be a JSON object');
  if (present(body.template_id) && !present(body.template_hash_id)) {
    throw ApiError.badRequest(
      "template_id is not accepted here: pass the template's hash_id as template_hash_id",
    );
  }
  const image = optionalString(body, 'image');
  const templateHashId = optionalString(body, 'template_hash_id');
  if ((image === null || image.trim() === '') && templateHashId === null)
    throw ApiError.badRequest('image is required unless template_hash_id is given');

  let env: Record<string, string> = {};
  if (present(body.env)) {
    if (typeof body.env === 'string') {
      throw ApiError.badRequest(
        'env must be an object such as {"TZ": "UTC", "-p 8080:8080": "1"}, not a Docker-flag string like "-e TZ=UTC -p 8080:8080" (that form is for templates)',
      );
    }
    if (!isJsonObject(body.env))
      throw ApiError.badRequest('env must be an object of variable names (or -p port keys) to string values');
    env = Object.fromEntries(
      Object.entries(body.env).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
    );
  }

  const onstart = optionalString(body, 'onstart');
  if (onstart !== null && onstart.length > ONSTART_MAX)
    throw ApiError.badRequest(`onstart is ${onstart.length} characters; at most ${ONSTART_MAX} are allowed`);

  const disk = optionalNumber(body, 'disk');
  if (disk !== null && (disk <= 0 || disk > MONEY_LIMITS.diskGb))
    throw ApiError.badRequest(
      `disk must be a positive number of GB, at most ${MONEY_LIMITS.diskGb.toLocaleString('en-US')} (got ${disk})`,
    );

  const targetRaw = optionalString(body, 'target_state');
  if (targetRaw !== null && targetRaw !== 'running' && targetRaw !== 'stopped')
    throw ApiError.badRequest('target_state must be running or stopped');

  const price = optionalNumber(body, 'price');
  if (price !== null && price <= 0) throw ApiError.badRequest('price must be a positive bid in $/hour');
  // The bound per GPU (MONEY_LIMITS.gpuPricePerHour) is checked against the offer's GPU count when renting.

  const runtypeRaw = optionalString(body, 'runtype');
  let args: string[] | null = null;
  if (present(body.args)) {
    if (!Array.isArray(body.args) || !body.args.every((a) => typeof a === 'string'))
      throw ApiError.badRequest('args must be a list of strings');
    args = body.args as string[];
  }
  const vm = optionalBoolean(body, 'vm') ?? false;
  const volume = present(body.volume_info) ? parseVolumeInfo(body.volume_info) : null;
  const extraFilters = body.extra_filters;
  if (present(extraFilters) && !isJsonObject(extraFilters))
    throw ApiError.badRequest('extra_filters must be an object');

  return {
    image: image === null || image.trim() === '' ? null : image.trim(),
    templateHashId,
    label: optionalString(body, 'label'),
    disk,
    runtype: runtypeRaw === null ? null : parseRuntype(runtypeRaw),
    targetState: (targetRaw ?? 'running') as InstanceIntendedStatus,
    price,
    env,
    onstart,
    argsStr: optionalString(body, 'args_str'),
    args,
    useJupyterLab: optionalBoolean(body, 'use_jupyter_lab'),
    jupyterDir: optionalString(body, 'jupyter_dir'),
    pythonUtf8: optionalBoolean(body, 'python_utf8') ?? false,
    langUtf8: optionalBoolean(body, 'lang_utf8') ?? false,
    imageLogin: optionalString(body, 'image_login'),
    cancelUnavail: optionalBoolean(body, 'cancel_unavail') ?? false,
    extraFilters: isJsonObject(extraFilters) ? extraFilters : {},
    vm,
    volume,
  };
}
