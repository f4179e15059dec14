import { ApiError, type InstanceConfigChanges } from '@rigmarket/contracts';

/** Bounds of `vastai update instance` (docs/instances.md, "Update instance"). */
export const UPDATE_LIMITS = {
  imageChars: 512,
  envKeys: 128,
  envKeyChars: 256,
  envValueChars: 4_096,
  onstartChars: 16_384,
  argsChars: 4_096,
  templateHashChars: 128,
} as const;

export interface UpdateRequest {
  /** What the body sets itself (it wins over the template's). */
  changes: InstanceConfigChanges;
  templateHashId: string | null;
  templateId: number | null;
}

const given = (value: unknown): boolean => value !== undefined && value !== null;

function boundedString(body: Record<string, unknown>, key: string, max: number): string | undefined {
  const value = body[key];
  if (!given(value)) return undefined;
  if (typeof value !== 'string') throw ApiError.badRequest(`${key} must be a string`);
  if (value.length > max) throw ApiError.badRequest(`${key} is longer than ${max} characters`);
  return value;
}

/**
 * The body `vastai update instance` sends (`{id, template_id?, template_hash_id?, image?, args?, env?,
 * onstart?}`, only the given keys) as bounded changes. env is the CLI's JSON object (`--env '{"K":"v"}'`);
 * it replaces the instance's env; numbers and booleans become strings, `-p` port keys are kept as keys.
 */
export function parseUpdateRequest(body: Record<string, unknown>): UpdateRequest {
  const changes: InstanceConfigChanges = {};
  const image = boundedString(body, 'image', UPDATE_LIMITS.imageChars);
  if (image !== undefined) {
    if (!/^\S+$/.test(image)) throw ApiError.badRequest('image must be one image reference, without spaces');
    changes.image = image;
  }
  const onstart = boundedString(body, 'onstart', UPDATE_LIMITS.onstartChars);
  if (onstart !== undefined) changes.onstart = onstart;
  const args = boundedString(body, 'args', UPDATE_LIMITS.argsChars);
  if (args !== undefined) changes.argsStr = args;
  if (given(body.env)) {
    const env = body.env;
    if (typeof env !== 'object' || Array.isArray(env) || env === null)
      throw ApiError.badRequest('env must be an object of variables, e.g. {"KEY": "value"}');
    const entries = Object.entries(env as Record<string, unknown>);
    if (entries.length > UPDATE_LIMITS.envKeys)
      throw ApiError.badRequest(`env has more than ${UPDATE_LIMITS.envKeys} variables`);
    changes.env = {};
    for (const [key, value] of entries) {
      if (key.length === 0 || key.length > UPDATE_LIMITS.envKeyChars)
        throw ApiError.badRequest(`env names are 1 to ${UPDATE_LIMITS.envKeyChars} characters`);
      if (!['string', 'number', 'boolean'].includes(typeof value))
        throw ApiError.badRequest(`env ${key.slice(0, 40)} must be a string, number or boolean`);
      const text = String(value);
      if (text.length > UPDATE_LIMITS.envValueChars)
        throw ApiError.badRequest(
          `env ${key.slice(0, 40)} is longer than ${UPDATE_LIMITS.envValueChars} characters`,
        );
      changes.env[key] = text;
    }
  }
  const templateHashId = boundedString(body, 'template_hash_id', UPDATE_LIMITS.templateHashChars) ?? null;
  let templateId: number | null = null;
  if (given(body.template_id)) {
    const id = Number(body.template_id);
    if (!Number.isSafeInteger(id) || id < 1)
      throw ApiError.badRequest('template_id must be a positive integer');
    templateId = id;
  }
  return { changes, templateHashId, templateId };
}
