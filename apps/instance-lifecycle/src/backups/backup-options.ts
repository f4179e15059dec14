/** The bounds of instance backups (docs/instances.md, "Instance backups"); each from RIGMARKET_BACKUP_* when set. */
export interface BackupOptions {
  /** A backup larger than this fails (RIGMARKET_BACKUP_MAX_BYTES; default 1 GiB). */
  maxBytes: number;
  /** The host stops a backup that takes longer (default 10 minutes). */
  timeLimitMs: number;
  /** The host sends at most this fast (RIGMARKET_BACKUP_BYTES_PER_SECOND; default 50 MiB/s). */
  bytesPerSecond: number;
  /** A stored backup is deleted this long after it was taken (RIGMARKET_BACKUP_RETENTION_DAYS; default 7 days). */
  retentionMs: number;
  /** A user keeps at most this many backups; the oldest go first (RIGMARKET_BACKUP_MAX_PER_USER; default 10). */
  maxPerUser: number;
  /** How long a download token works (default 15 minutes). */
  tokenTtlMs: number;
  /** How often stale and expired backups are looked for (default a minute; 0 = only when asked). */
  sweepIntervalMs: number;
}

export const BACKUP_OPTIONS = Symbol('BACKUP_OPTIONS');

export const DEFAULT_BACKUP_OPTIONS: BackupOptions = {
  maxBytes: 1024 ** 3,
  timeLimitMs: 10 * 60_000,
  bytesPerSecond: 50 * 1024 * 1024,
  retentionMs: 7 * 86_400_000,
  maxPerUser: 10,
  tokenTtlMs: 15 * 60_000,
  sweepIntervalMs: 60_000,
};

const positive = (raw: string | undefined): number | undefined => {
  const value = Number(raw);
  return raw && Number.isFinite(value) && value > 0 ? value : undefined;
};

export function backupOptions(
  given: Partial<BackupOptions> = {},
  env: NodeJS.ProcessEnv = process.env,
): BackupOptions {
  const days = positive(env.RIGMARKET_BACKUP_RETENTION_DAYS);
  return {
    ...DEFAULT_BACKUP_OPTIONS,
    ...(positive(env.RIGMARKET_BACKUP_MAX_BYTES)
      ? { maxBytes: positive(env.RIGMARKET_BACKUP_MAX_BYTES)! }
      : {}),
    ...(positive(env.RIGMARKET_BACKUP_BYTES_PER_SECOND)
      ? { bytesPerSecond: positive(env.RIGMARKET_BACKUP_BYTES_PER_SECOND)! }
      : {}),
    ...(days ? { retentionMs: days * 86_400_000 } : {}),
    ...(positive(env.RIGMARKET_BACKUP_MAX_PER_USER)
      ? { maxPerUser: Math.floor(positive(env.RIGMARKET_BACKUP_MAX_PER_USER)!) }
      : {}),
    ...given,
  };
}

/** A backup still pending this long after it was asked for is failed (its host never answered). */
export const staleAfterMs = (options: BackupOptions): number => options.timeLimitMs + 2 * 60_000;
