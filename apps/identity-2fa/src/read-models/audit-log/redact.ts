import { isSecretFieldName } from '@rigmarket/contracts';

/**
 * The part of an event's payload an audit row shows as `args`: plain values (numbers, booleans, short
 * strings) whose names say nothing secret (contracts' isSecretFieldName: hashes, sealed values, codes, keys,
 * e-mail, phone, scripts). Nested objects and long text are dropped too, so that neither a secret nor its
 * hash ever reaches an audit row.
 */
const MAX_STRING = 200;
const MAX_FIELDS = 24;

export function auditArgs(data: unknown): Record<string, string | number | boolean | null> {
  const args: Record<string, string | number | boolean | null> = {};
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return args;
  for (const [name, value] of Object.entries(data as Record<string, unknown>)) {
    if (Object.keys(args).length >= MAX_FIELDS) break;
    if (isSecretFieldName(name)) continue;
    if (value === null || typeof value === 'boolean') args[name] = value;
    else if (typeof value === 'number' && Number.isFinite(value)) args[name] = value;
    else if (typeof value === 'string' && value.length <= MAX_STRING) args[name] = value;
  }
  return args;
}
