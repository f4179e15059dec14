import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Put } from '@nestjs/common';
import { ApiError, type EventMetadata } from '@rigmarket/contracts';
import type { CommandBody, ContextRuntime } from '@rigmarket/event-sourcing';
import {
  ApiContract,
  Authenticated,
  type Call,
  CallOf,
  isJsonObject,
  RequirePermission,
} from '@rigmarket/http-kit';
import { ANSWERS, BODIES } from '../instance-lifecycle.openapi';
import { INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { positiveId } from '../instances/http-params';
import { type ScheduledJobRow, accountScheduledJobs } from '../read-models/scheduled-jobs/queries';
import { SCHEMA } from '../schema';
import { type Frequency, scheduleProblem } from './schedule';
import { SCHEDULABLE_ROUTES, schedulableRoute } from './schedulable-routes';
import {
  type JobSpec,
  type ScheduledJobCommand,
  scheduledJobsDecider,
  scheduledJobsStreamId,
} from './scheduled-job.decider';

/** A job's window is at most this long (the CLI's default is 7 days). */
const MAX_WINDOW_MS = 5 * 366 * 86_400_000;
/** The stored request body, serialised, at most this long. */
const MAX_BODY_BYTES = 4096;
const FREQUENCIES: readonly Frequency[] = ['HOURLY', 'DAILY', 'WEEKLY'];

const epoch = (value: unknown, name: string): number => {
  const seconds = typeof value === 'string' ? Number(value) : value;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0 || seconds > 4_102_444_800)
    throw ApiError.badRequest(`${name} must be a UNIX time in seconds`);
  return seconds * 1000;
};
const optionalInt = (value: unknown, name: string): number | null => {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw ApiError.badRequest(`${name} must be an integer or null`);
  return value;
};

/** The CLI's body: `{start_time, end_time, api_endpoint, request_method, request_body, day_of_the_week, hour_of_the_day, frequency, instance_id}`. */
function parse(body: unknown, now: Date): JobSpec {
  if (!isJsonObject(body)) throw ApiError.badRequest('The body must be a JSON object');
  const method = typeof body.request_method === 'string' ? body.request_method.toUpperCase() : '';
  const endpoint = typeof body.api_endpoint === 'string' ? body.api_endpoint : '';
  const requestBody = body.request_body ?? {};
  if (!isJsonObject(requestBody) || Buffer.byteLength(JSON.stringify(requestBody)) > MAX_BODY_BYTES)
    throw ApiError.badRequest(`request_body must be a JSON object of at most ${MAX_BODY_BYTES} bytes`);
  const found = endpoint.length <= 300 ? schedulableRoute(method, endpoint, requestBody) : undefined;
  if (!found)
    throw ApiError.badRequest(
      `Only these calls can be scheduled: ${SCHEDULABLE_ROUTES.map((r) => `${r.method} ${r.path.source} (${r.name})`).join(', ')}`,
    );
  if (body.instance_id !== undefined && Number(body.instance_id) !== found.instanceId)
    throw ApiError.badRequest(`instance_id must be the instance the call names (${found.instanceId})`);
  const frequency = body.frequency as Frequency;
  if (!FREQUENCIES.includes(frequency))
    throw ApiError.badRequest('frequency must be HOURLY, DAILY or WEEKLY');
  const schedule = {
    frequency,
    dayOfWeek: optionalInt(body.day_of_the_week, 'day_of_the_week'),
    hourOfDay: optionalInt(body.hour_of_the_day, 'hour_of_the_day'),
  };
  const problem = scheduleProblem(schedule);
  if (problem) throw ApiError.badRequest(problem);
  const start =
    body.start_time === undefined || body.start_time === null
      ? now.getTime()
      : epoch(body.start_time, 'start_time');
  const end = epoch(body.end_time, 'end_time');
  if (end <= start) throw ApiError.badRequest('end_time must be after start_time');
  // The route's own checks of the body (a bid's price...) refuse it now rather than at every run.
  found.command(0, { correlationId: 'check', causationId: 'check' }, { jobId: 0, dueAt: now.toISOString() });
  return {
    ...schedule,
    startTime: new Date(start).toISOString(),
    // A job runs for five years at most: a later end (a contract ending in 2100, the CLI's default for a
    // scheduled cloud copy) is brought back to that.
    endTime: new Date(Math.min(end, start + MAX_WINDOW_MS)).toISOString(),
    instanceId: found.instanceId,
    method,
    endpoint,
    body: requestBody,
  };
}

const seconds = (value: Date | string | null) => (value === null ? null : new Date(value).getTime() / 1000);

/** A job as `vastai show scheduled-jobs` reads it (its table's fields), with its next and last runs. */
function view(row: ScheduledJobRow) {
  return {
    id: Number(row.job_id),
    instance_id: Number(row.instance_id),
    api_endpoint: row.api_endpoint,
    request_method: row.request_method,
    request_body:
      typeof row.request_body === 'string' ? (JSON.parse(row.request_body) as unknown) : row.request_body,
    start_time: seconds(row.start_time),
    end_time: seconds(row.end_time),
    day_of_the_week: row.day_of_the_week,
    hour_of_the_day: row.hour_of_the_day,
    min_of_the_hour: 0,
    frequency: row.frequency,
    next_run_time: seconds(row.next_run_at),
    last_run_time: seconds(row.last_run_at),
    last_result: row.last_ok === null ? null : { ok: row.last_ok, msg: row.last_msg ?? '' },
    runs: Number(row.runs),
  };
}

/**
 * The caller's scheduled jobs (`--schedule` on reboot instance, change bid...; `show scheduled-jobs`,
 * `delete scheduled-job`): one stream per account, so no route reaches another account's job (404, as for one
 * that does not exist). The ScheduledJobRunner runs them.
 */
@Controller('api/v0/commands/schedule_job')
@Authenticated()
export class ScheduledJobsController {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  private async run(command: CommandBody<ScheduledJobCommand>, metadata: EventMetadata) {
    await this.runtime.runner.run(
      scheduledJobsStreamId(command.userId),
      scheduledJobsDecider,
      command,
      metadata,
    );
  }

  /** The call must name one of the caller's live instances. */
  private async ownInstance(userId: number, instanceId: number): Promise<void> {
    const rows = await this.runtime.db.query(
      `SELECT 1 FROM ${SCHEMA}.instances WHERE instance_id = $1 AND owner_id = $2 AND NOT destroyed`,
      [instanceId, userId],
    );
    if (rows.length === 0)
      throw ApiError.notFound(`No instance ${instanceId} of this account`, 'no_such_instance');
  }

  /** A plain list, as the CLI reads it. */
  @Get()
  @RequirePermission('instance_read')
  @ApiContract({ ok: ANSWERS.scheduledJobs })
  async list(@CallOf() { caller }: Call) {
    return (await accountScheduledJobs(this.runtime.db, caller.userId)).map(view);
  }

  /** 422 `scheduled_job_exists` with `scheduled_job_id` when the account already schedules this call (the CLI then offers to update it). */
  @Post()
  @HttpCode(200)
  @RequirePermission('instance_write')
  @ApiContract({
    body: BODIES.scheduleJob,
    ok: ANSWERS.scheduledJob,
    errors: { 400: ['bad_request'], 404: ['no_such_instance'], 422: ['scheduled_job_exists'] },
  })
  async create(@Body() body: unknown, @CallOf() { caller, metadata }: Call) {
    const job = parse(body, this.runtime.runner.clock.now());
    await this.ownInstance(caller.userId, job.instanceId);
    const jobId = await this.runtime.nextId('scheduled_job_ids');
    await this.run({ type: 'CreateScheduledJob', userId: caller.userId, jobId, job }, metadata);
    return {
      success: true,
      scheduled_job_id: jobId,
      msg: `Scheduled ${job.frequency} ${job.method} ${job.endpoint}`,
    };
  }

  @Put(':id')
  @RequirePermission('instance_write')
  @ApiContract({
    body: BODIES.scheduleJob,
    ok: ANSWERS.scheduledJob,
    errors: { 400: ['bad_request'], 404: ['scheduled_job_not_found', 'no_such_instance'] },
  })
  async update(@Param('id') idRaw: string, @Body() body: unknown, @CallOf() { caller, metadata }: Call) {
    const jobId = positiveId(idRaw, 'scheduled job id');
    const job = parse(body, this.runtime.runner.clock.now());
    await this.ownInstance(caller.userId, job.instanceId);
    await this.run({ type: 'UpdateScheduledJob', userId: caller.userId, jobId, job }, metadata);
    return { success: true, scheduled_job_id: jobId, msg: `Scheduled job ${jobId} updated` };
  }

  @Delete(':id')
  @RequirePermission('instance_write')
  @ApiContract({ ok: ANSWERS.scheduledJob, errors: { 404: ['scheduled_job_not_found'] } })
  async remove(@Param('id') idRaw: string, @CallOf() { caller, metadata }: Call) {
    const jobId = positiveId(idRaw, 'scheduled job id');
    await this.run({ type: 'DeleteScheduledJob', userId: caller.userId, jobId }, metadata);
    return { success: true, scheduled_job_id: jobId, msg: `Scheduled job ${jobId} deleted` };
  }
}
