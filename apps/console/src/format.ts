/** Dollars per hour, always with the unit, e.g. "$0.400/h". */
export function perHour(dph: number | null | undefined): string {
  if (dph === null || dph === undefined || !Number.isFinite(dph)) return '–';
  return `$${dph < 10 ? dph.toFixed(3) : dph.toFixed(2)}/h`;
}

export function dollars(amount: number | null | undefined): string {
  if (amount === null || amount === undefined || !Number.isFinite(amount)) return '–';
  return `${amount < 0 ? '-' : ''}$${Math.abs(amount).toFixed(2)}`;
}

/** GPU RAM as the API gives it (MB) in GB. */
export function gigabytes(mb: number | null | undefined): string {
  if (!mb) return '–';
  return `${Math.round(mb / 1024)} GB`;
}

export function percent(fraction: number | null | undefined): string {
  if (fraction === null || fraction === undefined) return '–';
  return `${(fraction * 100).toFixed(1)}%`;
}

export function when(epochSeconds: number | null | undefined): string {
  if (!epochSeconds) return '–';
  return new Date(epochSeconds * 1000).toLocaleString();
}

/** Money that may be small (a few seconds of billing): cents from $1, otherwise four decimals. */
export function amount(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  return Math.abs(value) >= 1 || value === 0
    ? dollars(value)
    : `${value < 0 ? '-' : ''}$${Math.abs(value).toFixed(4)}`;
}
