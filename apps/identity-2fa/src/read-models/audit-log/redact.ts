/**
 * The part of an event's payload an audit row shows as `args`: plain values (numbers, booleans, short
 * strings) whose names say nothing secret. Everything else is dropped: nested objects, long text, and any
 * field named like a secret, a credential or personal data (hashes, sealed values, codes, keys, e-mail,
 * phone), so that neither a secret nor its hash ever reaches an audit row.
 */
const SECRET_NAME =
  /pass|secret|token|hash|seal|code|otp|totp|private|credential|cipher|nonce|salt|^key|key$|value|phone|email|env|onstart|args|script|command/i;
const MAX_STRING = 200;
const MAX_FIELDS = 24;

export function auditArgs(data: unknown): Record<string, string | number | boolean | null> {
  const args: Record<string, string | number | boolean | null> = {};
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return args;
  for (const [name, value] of Object.entries(data as Record<string, unknown>)) {
    if (Object.keys(args).length >= MAX_FIELDS) break;
    // An identifier (keyId, hashId, instanceId) names an object; it is never the secret itself.
    if (SECRET_NAME.test(name) && !/Id$/.test(name)) continue;
    if (value === null || typeof value === 'boolean') args[name] = value;
    else if (typeof value === 'number' && Number.isFinite(value)) args[name] = value;
    else if (typeof value === 'string' && value.length <= MAX_STRING) args[name] = value;
  }
  return args;
}
