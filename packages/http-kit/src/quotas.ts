import { ApiError } from '@rigmarket/contracts';

/**
 * Per-account quotas: how many live objects of a kind one account may hold. Each is checked by the owning
 * context's create handler against its own read model, before the command runs. Concurrent creates by
 * one account can pass the check together, so an account may end a few objects over the limit; the
 * quota bounds abuse, it is not an exact count. Defaults and variables: docs/api.md ("Quotas").
 */
export interface Quota {
  /** What is counted, in words for the Error object: "templates". */
  readonly noun: string;
  readonly env: string;
  readonly defaultLimit: number;
}

export const QUOTAS = {
  templates: { noun: 'templates', env: 'RIGMARKET_QUOTA_TEMPLATES', defaultLimit: 1000 },
  apiKeys: { noun: 'API keys', env: 'RIGMARKET_QUOTA_API_KEYS', defaultLimit: 200 },
  sshKeys: { noun: 'SSH keys', env: 'RIGMARKET_QUOTA_SSH_KEYS', defaultLimit: 100 },
  webhooks: { noun: 'webhook endpoints', env: 'RIGMARKET_QUOTA_WEBHOOKS', defaultLimit: 20 },
  machines: { noun: 'machines', env: 'RIGMARKET_QUOTA_MACHINES', defaultLimit: 500 },
  instances: { noun: 'instances', env: 'RIGMARKET_QUOTA_INSTANCES', defaultLimit: 500 },
} as const satisfies Record<string, Quota>;

export function quotaLimit(quota: Quota, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[quota.env];
  const value = raw === undefined || raw === '' ? quota.defaultLimit : Number(raw);
  return Number.isInteger(value) && value >= 0 ? value : quota.defaultLimit;
}

interface CountingDb {
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
}

/**
 * Throws 403 `quota_exceeded` when the account already holds the most it may. `countSql` selects one
 * row with a column `n`: the account's live objects of the kind.
 */
export async function enforceQuota(
  db: CountingDb,
  quota: Quota,
  countSql: string,
  params: unknown[],
): Promise<void> {
  const [row] = await db.query<{ n: string | number }>(countSql, params);
  refuseOverQuota(quota, Number(row?.n ?? 0));
}

/** enforceQuota's decision, for a caller that counted the account's objects in a query of its own. */
export function refuseOverQuota(quota: Quota, held: number): void {
  const limit = quotaLimit(quota);
  if (held >= limit) {
    throw new ApiError(
      403,
      'quota_exceeded',
      `Quota reached: an account may hold at most ${limit} ${quota.noun} (it holds ${held}); ` +
        `delete some first, or ask the operator to raise ${quota.env}.`,
      { quota: quota.env, limit },
    );
  }
}
