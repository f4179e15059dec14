import { ApiError } from './errors';

/**
 * Money on the ledger is an integer number of micro-dollars (1e-6 $): per-second GPU billing needs more
 * than cents, and integers add exactly. Requests and responses speak dollars (JSON numbers); they are
 * turned into micros once, at the edge, and every sum after that is an integer sum.
 */
export const MICROS_PER_DOLLAR = 1_000_000;

/**
 * The documented upper bounds (docs/api.md "Limits"): a request above one answers 400 naming it. They keep
 * every amount the ledger can see far inside the integers a double holds exactly (2^53 micros, about $9e9).
 */
export const MONEY_LIMITS = {
  /** price_gpu, price_min_bid, and a bid per rented GPU, in $/hour. */
  gpuPricePerHour: 1_000,
  /** price_disk and a volume offer's price_disk / vol_price, in $/GB/month. */
  diskPricePerGbMonth: 10,
  /** price_inetu, price_inetd, in $/GB. */
  inetPricePerGb: 100,
  /** An instance's disk, a volume's size and the space a volume offer lists, in GB. */
  diskGb: 100_000,
  /** One admin credit grant, in $. */
  creditGrant: 1_000_000,
  /** One transfer of credit between accounts, in $. */
  creditTransfer: 1_000_000,
  /** One prepayment into an instance's deposit, in $. */
  instancePrepay: 1_000_000,
  /** An account's balance after a grant, in $. */
  balance: 1_000_000_000,
} as const;

/** The largest amount one ledger event may carry ($1e9, in micros). */
export const MAX_LEDGER_AMOUNT_MICROS = MONEY_LIMITS.balance * MICROS_PER_DOLLAR;

/** Dollars (a bounded JSON number) to micros, rounded to the nearest micro-dollar. */
export function dollarsToMicros(dollars: number): number {
  const micros = Math.round(dollars * MICROS_PER_DOLLAR);
  return Object.is(micros, -0) ? 0 : micros;
}

/** Micros to dollars for a JSON response (the nearest double to the exact decimal). */
export const microsToDollars = (micros: number): number => micros / MICROS_PER_DOLLAR;

/** Micros as an exact decimal string of dollars with 6 places: the value bound to a NUMERIC(20, 6) column. */
export function microsToDecimal(micros: number): string {
  if (!Number.isSafeInteger(micros)) throw new RangeError(`not an integer number of micros: ${micros}`);
  const sign = micros < 0 ? '-' : '';
  const digits = String(Math.abs(micros)).padStart(7, '0');
  return `${sign}${digits.slice(0, -6)}.${digits.slice(-6)}`;
}

/** A NUMERIC dollars value read back from PostgreSQL (a string) to micros. */
export function decimalToMicros(value: string | number | null | undefined): number {
  if (value === null || value === undefined) return 0;
  const text = String(value).trim();
  const match = /^(-?)(\d*)(?:\.(\d*))?$/.exec(text);
  if (!match) return dollarsToMicros(Number(text));
  const whole = match[2] || '0';
  const fraction = (match[3] ?? '').padEnd(6, '0');
  const micros = Number(whole) * MICROS_PER_DOLLAR + Number(fraction.slice(0, 6));
  return match[1] === '-' && micros !== 0 ? -micros : micros;
}

/**
 * A bounded dollar amount from a request: a finite number in [0, max] (or (0, max] unless allowZero),
 * else a 400 `invalid_amount` naming the field and its bound.
 */
export function boundedDollars(
  name: string,
  value: number,
  max: number,
  options: { allowZero?: boolean; unit?: string } = {},
): number {
  const unit = options.unit ?? '$';
  const low = options.allowZero ? '>= 0' : '> 0';
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < 0 ||
    (!options.allowZero && value === 0) ||
    value > max
  ) {
    throw new ApiError(
      400,
      'invalid_amount',
      `${name} must be a number ${low} and at most ${max.toLocaleString('en-US')} ${unit} (got ${String(value)})`,
      { field: name, max },
    );
  }
  return value;
}

/**
 * Old (schema version 1) ledger payloads carried float dollars. Upcast to micros; an amount no request can
 * produce any more (not finite, or beyond $1e9: the unbounded amounts of before the limits) is voided to 0
 * so that one poisoned event cannot overflow a balance or a read model. The stored event keeps its payload.
 */
export function legacyDollarsToMicros(dollars: unknown): number {
  if (typeof dollars !== 'number' || !Number.isFinite(dollars)) return 0;
  if (Math.abs(dollars) > MONEY_LIMITS.balance) return 0;
  return dollarsToMicros(dollars);
}
