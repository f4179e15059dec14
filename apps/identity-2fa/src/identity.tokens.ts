export const IDENTITY_RUNTIME = Symbol('IDENTITY_RUNTIME');
export const IDENTITY_OPTIONS = Symbol('IDENTITY_OPTIONS');

export interface IdentityOptions {
  /** RIGMARKET_ADMIN_KEY: seeds the admin with this full-access key on an empty store. */
  adminKey?: string;
  adminEmail?: string;
  /** Lifetime of an e-mail verification code. */
  verificationTtlMs?: number;
}
