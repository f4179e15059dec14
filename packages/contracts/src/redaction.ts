/**
 * Field names that hold, or may hold, a secret, personal data or a script: hashes, sealed values, codes,
 * keys, passwords, e-mail, phone numbers, environment and start-up commands (which often carry tokens).
 * What leaves the platform for people to read about events (audit rows, object history) drops such fields.
 * An identifier (`keyId`, `hashId`) names an object and is kept.
 */
const SECRET_FIELD_NAME =
  /pass|secret|token|hash|seal|code|otp|totp|private|credential|cipher|nonce|salt|^key|key$|value|phone|email|env|onstart|args|script|command/i;

export function isSecretFieldName(name: string): boolean {
  return SECRET_FIELD_NAME.test(name) && !/Id$/.test(name);
}

/** Deep enough for any event payload or folded state; deeper values are cut. */
const MAX_DEPTH = 6;

/** A copy of `value` without the fields `isSecretFieldName` names, at any depth. */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return null;
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item, depth + 1));
  const kept: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value as Record<string, unknown>)) {
    if (!isSecretFieldName(name)) kept[name] = redactSecrets(field, depth + 1);
  }
  return kept;
}
