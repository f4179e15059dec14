import {
  ApiError,
  MONEY_LIMITS,
  type InstanceConfig,
  type InstanceIntendedStatus,
  type InstanceRuntype,
  type TemplateContent,
} from '@rigmarket/contracts';
import { isJsonObject } from '@rigmarket/http-kit';

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

/**
 * The runtype table of the spec plus the CLI's space-separated token lists with the truncated
 * `_direc` spelling ("ssh_direc ssh_proxy", "jupyter_direc ssh_direc ssh_proxy", "args").
 */
export function parseRuntype(raw: string): InstanceRuntype {
  const tokens = raw.trim().split(/\s+/).filter(Boolean);
  if (tokens.length === 0) throw ApiError.badRequest('runtype must not be empty');
  let jupyter = false;
  let direct = false;
  let args = false;
  for (const token of tokens) {
    switch (token) {
      case 'ssh':
      case 'ssh_proxy':
        break;
      case 'ssh_direc':
      case 'ssh_direct':
        direct = true;
        break;
      case 'jupyter':
      case 'jupyter_proxy':
        jupyter = true;
        break;
      case 'jupyter_direc':
      case 'jupyter_direct':
        jupyter = true;
        direct = true;
        break;
      case 'args':
        args = true;
        break;
      default:
        throw ApiError.badRequest(
          `Unknown runtype "${token}": use ssh, ssh_direct, ssh_proxy, jupyter, jupyter_direct, jupyter_proxy or args`,
        );
    }
  }
  if (args) {
    if (tokens.length > 1) throw ApiError.badRequest('runtype args cannot be combined with ssh or jupyter');
    return 'args';
  }
  if (jupyter) return direct ? 'jupyter_direct' : 'jupyter_proxy';
  return direct ? 'ssh_direct' : 'ssh_proxy';
}

/** Container ports each runtype provisions, plus the `-p host:container` keys of env. */
export function containerPorts(runtype: InstanceRuntype, env: Record<string, string>): number[] {
  const ports = new Set<number>(
    runtype === 'ssh_direct' ? [22] : runtype === 'jupyter_direct' ? [8080, 22] : [],
  );
  for (const key of Object.keys(env)) {
    const match = /^-p\s+(?:\d+:)?(\d+)(?:\/\w+)?$/.exec(key.trim());
    if (match) ports.add(Number(match[1]));
  }
  return [...ports];
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

/** Splits a Docker-flag string, honouring single and double quotes. */
function shellWords(text: string): string[] {
  const words: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) words.push(m[1] ?? m[2] ?? m[3] ?? '');
  return words;
}

/** A template's `-e K=V -p h:c` env string in the creation request's object form (as the CLI converts it). */
export function envStringToObject(text: string): Record<string, string> {
  const words = shellWords(text);
  const env: Record<string, string> = {};
  for (let i = 0; i < words.length; i += 1) {
    const flag = words[i]!;
    const value = words[i + 1];
    if (value === undefined) break;
    if (flag === '-e' || flag === '--env') {
      const eq = value.indexOf('=');
      if (eq > 0) env[value.slice(0, eq)] = value.slice(eq + 1);
      i += 1;
    } else if (flag === '-p' || flag === '-v' || flag === '-n') {
      env[`${flag} ${value}`] = '1';
      i += 1;
    } else if (flag === '-h') {
      env['-h'] = value;
      i += 1;
    }
  }
  return env;
}

function templateRuntype(t: TemplateContent): InstanceRuntype {
  const runtype = t.runtype.split(/\s+/)[0] ?? 'args';
  if (runtype.startsWith('jupyter'))
    return t.jup_direct || runtype.endsWith('direct') ? 'jupyter_direct' : 'jupyter_proxy';
  if (runtype.startsWith('ssh'))
    return t.ssh_direct || runtype.endsWith('direct') ? 'ssh_direct' : 'ssh_proxy';
  return 'args';
}

function imageWithTag(image: string, tag: string): string {
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  return lastSegment.includes(':') || lastSegment.includes('@') || !tag ? image : `${image}:${tag}`;
}

/**
 * The spec's precedence table: request scalars win; env merged (template string converted, request
 * wins on a conflict); extra_filters merged by key; the template's registry credentials carry over.
 * The template's volume_info is a UI hint and has no effect.
 */
export function instanceConfig(
  request: CreateRequest,
  template: (TemplateContent & { hashId: string }) | null,
): InstanceConfig {
  const t = template;
  const image = request.image ?? (t ? imageWithTag(t.image, t.tag) : null);
  if (image === null) throw ApiError.badRequest('image is required unless template_hash_id is given');
  const login =
    t && t.docker_login_user
      ? `-u ${t.docker_login_user} -p ${t.docker_login_pass} ${t.docker_login_repo}`.trim()
      : null;
  return {
    image,
    // Without a runtype or template the CLI's default is "ssh" (docs/client-compat.md 2.2).
    runtype: request.runtype ?? (t ? templateRuntype(t) : 'ssh_proxy'),
    env: { ...(t ? envStringToObject(t.env) : {}), ...request.env },
    disk: request.disk ?? t?.recommended_disk_space ?? DEFAULT_DISK_GB,
    onstart: request.onstart ?? t?.onstart ?? null,
    argsStr: request.argsStr ?? t?.args_str ?? null,
    args: request.args,
    useJupyterLab: request.useJupyterLab ?? t?.use_jupyter_lab ?? false,
    jupyterDir: request.jupyterDir ?? t?.jupyter_dir ?? null,
    pythonUtf8: request.pythonUtf8,
    langUtf8: request.langUtf8,
    imageLogin: request.imageLogin ?? login,
    extraFilters: { ...(t?.extra_filters ?? {}), ...request.extraFilters },
    templateHashId: t?.hashId ?? null,
    vm: request.vm,
    // Only the request's volume_info counts; a template's is a UI hint.
    volume:
      request.volume && !request.volume.createNew
        ? { volumeId: request.volume.volumeId, mountPath: request.volume.mountPath }
        : null,
    ...(request.volume?.createNew ? { newVolume: newVolumeOf(request.volume) } : {}),
  };
}

/** The CLI's default size of a volume created while renting (docs/client-compat.md 2.2). */
export const DEFAULT_NEW_VOLUME_GB = 15;

function newVolumeOf(volume: VolumeRequest): NonNullable<InstanceConfig['newVolume']> {
  return {
    volumeOfferId: volume.volumeId,
    sizeGb: volume.sizeGb ?? DEFAULT_NEW_VOLUME_GB,
    name: volume.name,
    mountPath: volume.mountPath,
  };
}
