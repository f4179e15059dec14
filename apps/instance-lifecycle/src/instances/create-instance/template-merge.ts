import {
  ApiError,
  type InstanceConfig,
  type InstanceRuntype,
  type TemplateContent,
} from '@rigmarket/contracts';
import { type CreateRequest, DEFAULT_DISK_GB, type VolumeRequest } from './create-request';

// The template merge of a rent (docs/instances.md, step 4): the request over the template it names.

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

export function imageWithTag(image: string, tag: string): string {
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
