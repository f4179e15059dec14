export const IDENTITY_RUNTIME = Symbol('IDENTITY_RUNTIME');
export const IDENTITY_OPTIONS = Symbol('IDENTITY_OPTIONS');

export interface IdentityOptions {
  /** RIGMARKET_ADMIN_KEY: seeds the admin with this full-access key on an empty store. */
  adminKey?: string;
  adminEmail?: string;
  /** Lifetime of an e-mail verification code. */
  verificationTtlMs?: number;
  /** Lifetime of a session from a login (RIGMARKET_SESSION_TTL_MS; default 7 days). */
  sessionTtlMs?: number;
}

export const DEFAULT_SESSION_TTL_MS = 7 * 24 * 3600_000;

/** When a session created now stops authenticating. */
export function sessionExpiry(
  now: Date,
  options: IdentityOptions,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const fromEnv = Number(env.RIGMARKET_SESSION_TTL_MS);
  const ttl = options.sessionTtlMs ?? (fromEnv > 0 ? fromEnv : DEFAULT_SESSION_TTL_MS);
  return new Date(now.getTime() + ttl).toISOString();
}
