import { ApiError, MONEY_LIMITS, type TemplateContent } from '@rigmarket/contracts';

/**
 * Request bodies -> TemplateContent (docs/client-compat.md 2.11): docker_login_* absent is an empty string
 * (the CLI never sends user/pass), recommended_disk_space may be a string, env stays the Docker-flag
 * string, and on edit a null means "unchanged".
 */
type Kind = 'string' | 'nullableString' | 'bool' | 'number' | 'object' | 'nullableObject';

const FIELDS: Record<keyof TemplateContent, Kind> = {
  name: 'string',
  image: 'string',
  tag: 'string',
  desc: 'nullableString',
  readme: 'nullableString',
  readme_visible: 'bool',
  env: 'string',
  onstart: 'nullableString',
  runtype: 'string',
  args_str: 'nullableString',
  ssh_direct: 'bool',
  use_ssh: 'bool',
  jup_direct: 'bool',
  jupyter_dir: 'nullableString',
  use_jupyter_lab: 'bool',
  docker_login_repo: 'string',
  docker_login_user: 'string',
  docker_login_pass: 'string',
  href: 'nullableString',
  repo: 'nullableString',
  extra_filters: 'object',
  recommended_disk_space: 'number',
  private: 'bool',
  volume_info: 'nullableObject',
};

export const RUNTYPES = ['ssh', 'jupyter', 'args'];
export const DEFAULT_DISK_GB = 8;
const MAX_ONSTART = 4048;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PORT_KEY = /^-p \d{1,5}(?::\d{1,5})?(?:\/(?:tcp|udp))?$/;

/** One value as a shell word the instance side's splitter reads back whole (quotes only when needed). */
function shellWord(value: string): string {
  if (!/[\s"']/.test(value)) return value;
  if (!value.includes('"')) return `"${value}"`;
  if (!value.includes("'")) return `'${value}'`;
  throw ApiError.badRequest('an env value may not hold both single and double quotes');
}

/**
 * The creation request's object form (the spec: keys are variable names, or port flags `-p <host>:<container>`
 * with the value "1") as the template's Docker-flag string: {"A":"1","-p 80:80":"1"} -> `-e A=1 -p 80:80`.
 * Any other key is refused by name rather than stored as a broken flag.
 */
function envString(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    return Object.entries(value as Record<string, unknown>)
      .map(([key, v]) => {
        if (PORT_KEY.test(key)) {
          if (String(v) !== '1')
            throw ApiError.badRequest(`env port key ${JSON.stringify(key)} takes the value "1"`);
          return key;
        }
        if (!ENV_NAME.test(key))
          throw ApiError.badRequest(
            `env key ${JSON.stringify(key)} is neither a variable name ([A-Za-z_][A-Za-z0-9_]*) nor a port flag "-p <host>:<container>"`,
          );
        if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
          throw ApiError.badRequest(`env ${key} must be a string`);
        return `-e ${shellWord(`${key}=${String(v)}`)}`;
      })
      .join(' ');
  }
  throw ApiError.badRequest('env must be a string of Docker flags, e.g. "-e VAR=value -p 8080:8080"');
}

function convert(field: keyof TemplateContent, kind: Kind, raw: unknown): unknown {
  if (field === 'env') return envString(raw);
  switch (kind) {
    case 'string':
      if (typeof raw === 'string' || typeof raw === 'number') return String(raw);
      break;
    case 'nullableString':
      if (raw === null || typeof raw === 'string' || typeof raw === 'number')
        return raw === null ? null : String(raw);
      break;
    case 'bool':
      if (typeof raw === 'boolean') return raw;
      if (raw === 'true' || raw === 'false') return raw === 'true';
      break;
    case 'number': {
      const value =
        typeof raw === 'number'
          ? raw
          : typeof raw === 'string' && raw.trim() !== ''
            ? Number(raw)
            : Number.NaN;
      if (Number.isFinite(value) && value >= 0) return value;
      break;
    }
    case 'object':
      if (raw && typeof raw === 'object' && !Array.isArray(raw)) return raw;
      break;
    case 'nullableObject':
      if (raw === null || (typeof raw === 'object' && !Array.isArray(raw))) return raw;
      break;
  }
  throw ApiError.badRequest(
    `Invalid value for ${field}: expected ${kind === 'nullableString' ? 'a string' : kind === 'nullableObject' ? 'an object' : `a ${kind}`}`,
  );
}

function validate(content: Partial<TemplateContent>): void {
  if (content.runtype !== undefined && !RUNTYPES.includes(content.runtype))
    throw ApiError.badRequest('runtype must be ssh, jupyter or args');
  if (content.name !== undefined && content.name.trim() === '')
    throw ApiError.badRequest('name must not be empty');
  if (content.image !== undefined && content.image.trim() === '')
    throw ApiError.badRequest('image must not be empty');
  if (content.onstart && content.onstart.length > MAX_ONSTART)
    throw ApiError.badRequest(`onstart is longer than ${MAX_ONSTART} characters`);
  if (content.recommended_disk_space !== undefined && content.recommended_disk_space > MONEY_LIMITS.diskGb)
    throw ApiError.badRequest(
      `recommended_disk_space must be at most ${MONEY_LIMITS.diskGb.toLocaleString('en-US')} GB (got ${content.recommended_disk_space})`,
    );
}

/** The given, non-null fields of a body. */
export function templateChanges(body: Record<string, unknown>, forEdit = true): Partial<TemplateContent> {
  const changes: Record<string, unknown> = {};
  for (const [field, kind] of Object.entries(FIELDS) as Array<[keyof TemplateContent, Kind]>) {
    const raw = body[field];
    if (raw === undefined || raw === null) continue;
    changes[field] = convert(field, kind, raw);
  }
  // vastai 1.9 sends `extra_filters: {}` on every edit that does not set them: that is "unchanged" too
  // (and a non-empty one is merged by key into the template's, by the decider).
  if (forEdit && changes.extra_filters && Object.keys(changes.extra_filters as object).length === 0)
    delete changes.extra_filters;
  const result = changes as Partial<TemplateContent>;
  validate(result);
  return result;
}

export function templateContentForCreate(body: Record<string, unknown>): TemplateContent {
  for (const required of ['name', 'image'] as const) {
    if (body[required] === undefined || body[required] === null || body[required] === '')
      throw ApiError.badRequest(`${required} is required`);
  }
  const given = templateChanges(body, false);
  return {
    name: given.name!,
    image: given.image!,
    tag: given.tag ?? 'latest',
    desc: given.desc ?? null,
    readme: given.readme ?? null,
    readme_visible: given.readme_visible ?? true,
    env: given.env ?? '',
    onstart: given.onstart ?? null,
    runtype: given.runtype ?? 'args',
    args_str: given.args_str ?? null,
    ssh_direct: given.ssh_direct ?? false,
    use_ssh: given.use_ssh ?? false,
    jup_direct: given.jup_direct ?? false,
    jupyter_dir: given.jupyter_dir ?? null,
    use_jupyter_lab: given.use_jupyter_lab ?? false,
    docker_login_repo: given.docker_login_repo ?? '',
    docker_login_user: given.docker_login_user ?? '',
    docker_login_pass: given.docker_login_pass ?? '',
    href: given.href ?? null,
    repo: given.repo ?? null,
    extra_filters: given.extra_filters ?? {},
    recommended_disk_space: given.recommended_disk_space ?? DEFAULT_DISK_GB,
    private: given.private ?? false,
    volume_info: given.volume_info ?? null,
  };
}
