/** How often a scheduled job runs (`--schedule`), and when (UTC). */
export type Frequency = 'HOURLY' | 'DAILY' | 'WEEKLY';

export interface Schedule {
  frequency: Frequency;
  /** 0 = Sunday .. 6; WEEKLY only (null otherwise). */
  dayOfWeek: number | null;
  /** 0..23 UTC; DAILY and WEEKLY (null for HOURLY). */
  hourOfDay: number | null;
  /** The window the job runs in (ISO). */
  startTime: string;
  endTime: string;
}

const HOUR = 3_600_000;

/**
 * The first time after `after` (strictly) on the job's grid, at or after its start and at or before its end;
 * null when none is left. The grid: every whole hour (HOURLY), every day at `hourOfDay`:00 (DAILY), every
 * `dayOfWeek` at `hourOfDay`:00 (WEEKLY), all UTC. Pure.
 */
export function nextRunAfter(schedule: Schedule, after: Date): Date | null {
  const start = Date.parse(schedule.startTime);
  const end = Date.parse(schedule.endTime);
  const from = Math.max(after.getTime() + 1, start);
  let t = Math.ceil(from / HOUR) * HOUR;
  // At most a week of hours to look through.
  for (let i = 0; i <= 24 * 7; i += 1, t += HOUR) {
    if (t > end) return null;
    const at = new Date(t);
    if (schedule.hourOfDay !== null && at.getUTCHours() !== schedule.hourOfDay) continue;
    if (schedule.dayOfWeek !== null && at.getUTCDay() !== schedule.dayOfWeek) continue;
    return at;
  }
  return null;
}

/** A schedule as the CLI sends it is coherent: HOURLY names neither day nor hour, DAILY an hour, WEEKLY both. */
export function scheduleProblem(s: Pick<Schedule, 'frequency' | 'dayOfWeek' | 'hourOfDay'>): string | null {
  const hourOk =
    s.hourOfDay !== null && Number.isInteger(s.hourOfDay) && s.hourOfDay >= 0 && s.hourOfDay <= 23;
  const dayOk = s.dayOfWeek !== null && Number.isInteger(s.dayOfWeek) && s.dayOfWeek >= 0 && s.dayOfWeek <= 6;
  switch (s.frequency) {
    case 'HOURLY':
      return s.dayOfWeek === null && s.hourOfDay === null
        ? null
        : 'For HOURLY jobs, day_of_the_week and hour_of_the_day must both be null ("*")';
    case 'DAILY':
      return s.dayOfWeek === null && hourOk
        ? null
        : 'For DAILY jobs, day_of_the_week must be null ("*") and hour_of_the_day 0-23';
    case 'WEEKLY':
      return dayOk && hourOk ? null : 'For WEEKLY jobs, day_of_the_week must be 0-6 and hour_of_the_day 0-23';
  }
}
