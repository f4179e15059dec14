import { deciderSpec } from '@rigmarket/testing';
import { nextRunAfter, scheduleProblem } from './schedule';
import {
  type JobSpec,
  ScheduledJobErrors,
  type ScheduledJobEvent,
  scheduledJobsDecider,
} from './scheduled-job.decider';

// A Friday, 12:30 UTC.
const AT = '2026-05-01T12:30:00.000Z';
const reboot: JobSpec = {
  instanceId: 9,
  method: 'PUT',
  endpoint: '/api/v0/instances/reboot/9/',
  body: { instance_id: 9 },
  frequency: 'HOURLY',
  dayOfWeek: null,
  hourOfDay: null,
  startTime: AT,
  endTime: '2026-05-08T12:30:00.000Z',
};
const created = (jobId: number, job: JobSpec, nextRunAt: string | null): ScheduledJobEvent => ({
  type: 'ScheduledJobCreated',
  data: { ...job, userId: 2, jobId, nextRunAt, at: AT },
});
const started = (dueAt: string, nextRunAt: string | null, at = dueAt): ScheduledJobEvent => ({
  type: 'ScheduledJobRunStarted',
  data: { userId: 2, jobId: 1, dueAt, nextRunAt, at },
});
const spec = deciderSpec(scheduledJobsDecider);

describe('scheduled jobs decider', () => {
  it('creates a job due at its first time on the grid; refuses the same call twice with its id (422)', () => {
    spec
      .given([])
      .when({ type: 'CreateScheduledJob', at: AT, userId: 2, jobId: 1, job: reboot })
      .then([created(1, reboot, '2026-05-01T13:00:00.000Z')]);
    spec
      .given([created(1, reboot, '2026-05-01T13:00:00.000Z')])
      .when({
        type: 'CreateScheduledJob',
        at: AT,
        userId: 2,
        jobId: 2,
        job: { ...reboot, endpoint: '/api/v0/instances/reboot/9' },
      })
      .thenThrows(ScheduledJobErrors.exists);
    try {
      scheduledJobsDecider.decide(
        { type: 'CreateScheduledJob', at: AT, userId: 2, jobId: 2, job: reboot },
        [created(1, reboot, null)].reduce(scheduledJobsDecider.evolve, scheduledJobsDecider.initialState()),
      );
    } catch (error) {
      expect((error as { details: unknown }).details).toEqual({ scheduled_job_id: 1 });
    }
  });

  it('takes each due run once and moves the next run on; a missed run is not made up', () => {
    const history = [created(1, reboot, '2026-05-01T13:00:00.000Z')];
    spec
      .given(history)
      .when({
        type: 'StartScheduledRun',
        at: '2026-05-01T13:00:05.000Z',
        userId: 2,
        jobId: 1,
        dueAt: '2026-05-01T13:00:00.000Z',
      })
      .then([started('2026-05-01T13:00:00.000Z', '2026-05-01T14:00:00.000Z', '2026-05-01T13:00:05.000Z')]);
    // taken already (a second pass, another process): nothing
    spec
      .given([...history, started('2026-05-01T13:00:00.000Z', '2026-05-01T14:00:00.000Z')])
      .when({ type: 'StartScheduledRun', at: AT, userId: 2, jobId: 1, dueAt: '2026-05-01T13:00:00.000Z' })
      .then([]);
    // the platform was down from 13:00 to 16:20: one run now, then 17:00
    spec
      .given(history)
      .when({
        type: 'StartScheduledRun',
        at: '2026-05-01T16:20:00.000Z',
        userId: 2,
        jobId: 1,
        dueAt: '2026-05-01T13:00:00.000Z',
      })
      .then([started('2026-05-01T13:00:00.000Z', '2026-05-01T17:00:00.000Z', '2026-05-01T16:20:00.000Z')]);
  });

  it('records the outcome of a taken run only; updates and deletes only existing jobs', () => {
    const history = [
      created(1, reboot, '2026-05-01T13:00:00.000Z'),
      started('2026-05-01T13:00:00.000Z', '2026-05-01T14:00:00.000Z'),
    ];
    const finish = {
      type: 'FinishScheduledRun' as const,
      at: AT,
      userId: 2,
      jobId: 1,
      ok: false,
      error: 'instance_not_running',
      msg: 'stopped',
    };
    spec
      .given(history)
      .when({ ...finish, dueAt: '2026-05-01T13:00:00.000Z' })
      .then([
        {
          type: 'ScheduledJobRunFinished',
          data: {
            userId: 2,
            jobId: 1,
            dueAt: '2026-05-01T13:00:00.000Z',
            ok: false,
            error: 'instance_not_running',
            msg: 'stopped',
            at: AT,
          },
        },
      ]);
    spec
      .given(history)
      .when({ ...finish, dueAt: '2026-05-01T14:00:00.000Z' })
      .then([]);
    spec
      .given([])
      .when({ type: 'DeleteScheduledJob', at: AT, userId: 2, jobId: 1 })
      .thenThrows(ScheduledJobErrors.notFound);
    spec
      .given([])
      .when({ type: 'UpdateScheduledJob', at: AT, userId: 2, jobId: 1, job: reboot })
      .thenThrows(ScheduledJobErrors.notFound);
    spec
      .given(history)
      .when({ type: 'DeleteScheduledJob', at: AT, userId: 2, jobId: 1 })
      .then([{ type: 'ScheduledJobDeleted', data: { userId: 2, jobId: 1, at: AT } }]);
  });
});

describe('schedules', () => {
  const at = (iso: string) => new Date(iso);
  it('runs hourly on the hour, daily at its hour, weekly on its day and hour, within its window (UTC)', () => {
    expect(nextRunAfter(reboot, at('2026-05-01T13:00:00.000Z'))?.toISOString()).toBe(
      '2026-05-01T14:00:00.000Z',
    );
    const daily = { ...reboot, frequency: 'DAILY' as const, hourOfDay: 9 };
    expect(nextRunAfter(daily, at(AT))?.toISOString()).toBe('2026-05-02T09:00:00.000Z');
    // 2026-05-01 is a Friday; the next Sunday is 05-03
    const weekly = { ...reboot, frequency: 'WEEKLY' as const, dayOfWeek: 0, hourOfDay: 16 };
    expect(nextRunAfter(weekly, at(AT))?.toISOString()).toBe('2026-05-03T16:00:00.000Z');
    expect(nextRunAfter(weekly, at('2026-05-03T16:00:00.000Z'))).toBeNull(); // past the window's end
    expect(nextRunAfter({ ...reboot, startTime: '2026-05-02T00:00:00.000Z' }, at(AT))?.toISOString()).toBe(
      '2026-05-02T00:00:00.000Z',
    );
  });

  it('checks that the day and hour fit the frequency, as the CLI does', () => {
    expect(scheduleProblem({ frequency: 'HOURLY', dayOfWeek: null, hourOfDay: null })).toBeNull();
    expect(scheduleProblem({ frequency: 'HOURLY', dayOfWeek: 0, hourOfDay: 0 })).toMatch(/HOURLY/);
    expect(scheduleProblem({ frequency: 'DAILY', dayOfWeek: null, hourOfDay: 24 })).toMatch(/DAILY/);
    expect(scheduleProblem({ frequency: 'WEEKLY', dayOfWeek: 7, hourOfDay: 3 })).toMatch(/WEEKLY/);
    expect(scheduleProblem({ frequency: 'WEEKLY', dayOfWeek: 6, hourOfDay: 23 })).toBeNull();
  });
});

describe('scheduled jobs state snapshots', () => {
  it('folds into JSON data, so a snapshot read back decides as the full fold does', () => {
    const { initialState, evolve, decide, snapshot } = scheduledJobsDecider;
    expect(snapshot.every).toBeGreaterThan(0);
    const history: ScheduledJobEvent[] = [created(1, reboot, '2026-05-01T13:00:00.000Z')];
    for (let hour = 13; hour < 20; hour++) {
      const dueAt = `2026-05-01T${hour}:00:00.000Z`;
      history.push(started(dueAt, `2026-05-01T${hour + 1}:00:00.000Z`), {
        type: 'ScheduledJobRunFinished',
        data: { userId: 2, jobId: 1, dueAt, ok: true, error: null, msg: 'done', at: dueAt },
      });
    }
    const folded = history.reduce(evolve, initialState());
    const restored = JSON.parse(JSON.stringify(folded)) as typeof folded;
    expect(restored).toEqual(folded);
    const due = {
      type: 'StartScheduledRun',
      at: AT,
      userId: 2,
      jobId: 1,
      dueAt: '2026-05-01T20:00:00.000Z',
    } as const;
    expect(decide(due, restored)).toEqual(decide(due, folded));
    expect(decide(due, restored)).toHaveLength(1);
  });
});
