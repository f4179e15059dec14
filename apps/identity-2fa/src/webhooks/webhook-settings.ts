/** How webhooks are delivered (docs/operations.md, Webhooks); each from the environment unless given. */
export interface WebhookSettings {
  /**
   * The wait before each retry after a failed attempt, in order; its length bounds the attempts (one more
   * than its entries). RIGMARKET_WEBHOOK_RETRY_SCHEDULE, e.g. `5s,5m,30m,2h,5h,10h,10h` (Standard
   * Webhooks' own schedule, the default). Each wait is spread by +-20% (jitter).
   */
  retryScheduleMs: number[];
  /** After this many failed attempts in a row the endpoint is disabled (RIGMARKET_WEBHOOK_DISABLE_AFTER, 40). */
  disableAfterFailures: number;
  /** The most one attempt may take (RIGMARKET_WEBHOOK_TIMEOUT_MS, 10 s). */
  timeoutMs: number;
  /** How often the delivery worker looks for due deliveries (it is also woken by each new one). */
  pollMs: number;
  /**
   * Whether endpoints may point at private, loopback and link-local addresses
   * (RIGMARKET_WEBHOOK_ALLOW_PRIVATE=true; refused by default).
   */
  allowPrivateTargets: boolean;
  /** credit.low fires when a charge leaves less than this, in micro-dollars (RIGMARKET_WEBHOOK_CREDIT_LOW, $5). */
  creditLowMicros: number;
  /** Finished deliveries and their attempts are deleted after this many days (RIGMARKET_WEBHOOK_LOG_RETENTION_DAYS, 30). */
  retentionDays: number;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `5s,5m,30m,2h` (a bare number is milliseconds); undefined when any part does not parse. */
export function parseSchedule(text: string): number[] | undefined {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const delays = parts.map((part) => {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(part);
    return match ? Number(match[1]) * UNITS[match[2] ?? 'ms']! : NaN;
  });
  return delays.length > 0 && delays.length <= 20 && delays.every((d) => Number.isFinite(d) && d >= 0)
    ? delays
    : undefined;
}

const positive = (value: string | undefined, fallback: number) => {
  const n = Number(value);
  return value !== undefined && value !== '' && Number.isFinite(n) && n > 0 ? n : fallback;
};

export function webhookSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): WebhookSettings {
  return {
    retryScheduleMs:
      parseSchedule(env.RIGMARKET_WEBHOOK_RETRY_SCHEDULE ?? '') ?? parseSchedule('5s,5m,30m,2h,5h,10h,10h')!,
    disableAfterFailures: Math.floor(positive(env.RIGMARKET_WEBHOOK_DISABLE_AFTER, 40)),
    timeoutMs: positive(env.RIGMARKET_WEBHOOK_TIMEOUT_MS, 10_000),
    pollMs: 1000,
    allowPrivateTargets: /^(1|true|yes)$/i.test(env.RIGMARKET_WEBHOOK_ALLOW_PRIVATE ?? ''),
    creditLowMicros: Math.round(positive(env.RIGMARKET_WEBHOOK_CREDIT_LOW, 5) * 1_000_000),
    retentionDays: positive(env.RIGMARKET_WEBHOOK_LOG_RETENTION_DAYS, 30),
  };
}

/** The wait before retry number `failedAttempts` (1 = after the first failure), with +-20% jitter; undefined: no retry left. */
export function retryDelayMs(
  schedule: readonly number[],
  failedAttempts: number,
  random: () => number = Math.random,
): number | undefined {
  const base = schedule[failedAttempts - 1];
  if (base === undefined) return undefined;
  return Math.round(base * (0.8 + 0.4 * random()));
}

export const WEBHOOK_SETTINGS = Symbol('WEBHOOK_SETTINGS');
