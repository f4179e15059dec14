import { Controller, Get, Inject, Logger, Param, Query as QueryParam, Req, Res } from '@nestjs/common';
import { ApiError } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import {
  ApiContract,
  Authenticated,
  type Call,
  CallOf,
  RequirePermission,
  int,
  str,
} from '@rigmarket/http-kit';
import type { Request, Response } from 'express';
import type { HostDriver } from '../host/host-driver';
import { HOST_DRIVER, INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { positiveId } from '../instances/http-params';
import { checkLogsAccess } from '../logs/logs.handlers';
import { SCHEMA } from '../schema';
import { InstanceEventsFeed } from './instance-events.feed';
import { newLogLines, oneLine } from './log-follow';
import { SseConnections, type SseStream } from './sse';

/** How far back (in event positions of the context) a Last-Event-ID is replayed; older ids get a `reset`. */
export const REPLAY_WINDOW = BigInt(Number(process.env.RIGMARKET_SSE_REPLAY_EVENTS) || 100_000);
/** The longest a stream sleeps without a commit of this process (commits of other processes wait this long). */
const IDLE_POLL_MS = 2_000;
/** How often a followed log is asked for again (RIGMARKET_SSE_LOG_POLL_MS, default 1 s). */
const LOG_POLL_MS = Number(process.env.RIGMARKET_SSE_LOG_POLL_MS) || 1_000;
/** Lines a log stream starts with (the newest) when not resuming: `tail`, default 100, at most 10,000. */
const DEFAULT_TAIL = 100;
const MAX_TAIL = 10_000;

const EVENT_STREAM = 'text/event-stream';
const STREAM_ERRORS = {
  400: ['invalid_args'],
  429: ['too_many_streams'],
  503: ['too_many_streams', 'service_unavailable'],
} as const;

/** Last-Event-ID (the header EventSource sends on a reconnect) or `?last_event_id=`: a position, or null. */
function lastEventId(request: Request, query: string | undefined): string | null {
  const raw = request.get('last-event-id') ?? query;
  if (raw === undefined || raw === '') return null;
  if (!/^\d{1,18}$/.test(raw))
    throw new ApiError(400, 'invalid_args', 'Last-Event-ID must be an event id this stream sent');
  return BigInt(raw).toString();
}

const sleep = (ms: number, abort: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      abort.removeEventListener('abort', done);
      resolve();
    }
    abort.addEventListener('abort', done, { once: true });
  });

/**
 * Live streams over Server-Sent Events (docs/instances.md "Live streams"): the caller's instance changes
 * from the event store, and an instance's log as it grows. Declared before the instance routes, so that
 * `instances/events` is not read as an instance id.
 */
@Controller('api/v0/instances')
@Authenticated()
export class InstanceStreamsController {
  private readonly logger = new Logger('InstanceStreams');

  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(HOST_DRIVER) private readonly host: HostDriver,
    private readonly sse: SseConnections,
  ) {}

  @Get('events')
  @RequirePermission('instance_read')
  @ApiContract({
    ok: { type: 'string', description: 'event: instance / reset; id: the event position' },
    mediaType: EVENT_STREAM,
    query: { last_event_id: str },
    errors: STREAM_ERRORS,
  })
  async events(
    @Req() request: Request,
    @Res() response: Response,
    @CallOf() { caller }: Call,
    @QueryParam('last_event_id') lastEventIdQuery?: string,
  ): Promise<void> {
    const resume = lastEventId(request, lastEventIdQuery);
    // The starting point is fixed before the answer starts: a change made once the client saw the headers is sent.
    const head = await InstanceEventsFeed.head(this.runtime);
    const tooOld =
      resume !== null && (BigInt(resume) > BigInt(head) || BigInt(head) - BigInt(resume) > REPLAY_WINDOW);
    const stream = this.sse.start(caller.userId, request, response);
    if (tooOld)
      stream.send({
        id: head,
        event: 'reset',
        data: JSON.stringify({
          position: head,
          msg: `Event ${resume} is outside the ${REPLAY_WINDOW} events a stream replays; changes go on from the newest. Poll the instances for their state now.`,
        }),
      });
    void this.followEvents(
      stream,
      new InstanceEventsFeed(this.runtime, caller.userId),
      resume === null || tooOld ? head : resume,
    );
  }

  private async followEvents(stream: SseStream, feed: InstanceEventsFeed, from: string): Promise<void> {
    let cursor = from;
    while (!stream.closed.aborted) {
      const seen = this.runtime.commits.count;
      try {
        const page = await feed.read(cursor);
        for (const { position, change } of page.changes)
          stream.send({ id: position, event: 'instance', data: JSON.stringify(change) });
        cursor = page.scannedTo;
        if (page.full) continue;
      } catch (error) {
        if (stream.closed.aborted) return;
        this.logger.warn(`instance events stream: ${String(error)}; retrying`);
      }
      await this.runtime.commits.wait(IDLE_POLL_MS, stream.closed, seen);
    }
  }

  @Get(':id/logs/stream')
  @RequirePermission('instance_read')
  @ApiContract({
    ok: { type: 'string', description: 'event: log (one line each), end; id: the line number' },
    mediaType: EVENT_STREAM,
    query: { tail: int, last_event_id: str, daemon_logs: str },
    errors: {
      ...STREAM_ERRORS,
      400: ['invalid_args', 'invalid_id'],
      403: ['not_authorized'],
      404: ['invalid_id'],
    },
  })
  async logs(
    @Param('id') idRaw: string,
    @Req() request: Request,
    @Res() response: Response,
    @CallOf() { caller }: Call,
    @QueryParam('tail') tailRaw?: string,
    @QueryParam('last_event_id') lastEventIdQuery?: string,
    @QueryParam('daemon_logs') daemonRaw?: string,
  ): Promise<void> {
    const id = positiveId(idRaw, 'instance id');
    const resume = lastEventId(request, lastEventIdQuery);
    const tail = tailRaw === undefined || tailRaw === '' ? DEFAULT_TAIL : Number(tailRaw);
    if (!Number.isInteger(tail) || tail < 0 || tail > MAX_TAIL)
      throw new ApiError(400, 'invalid_args', `tail must be a number of lines from 0 to ${MAX_TAIL}`);
    await checkLogsAccess(this.runtime, id, caller.userId);
    const daemon = String(daemonRaw ?? '').toLowerCase() === 'true';
    const stream = this.sse.start(caller.userId, request, response);
    void this.followLog(stream, id, daemon, resume === null ? null : Number(resume), tail);
  }

  private async followLog(
    stream: SseStream,
    instanceId: number,
    daemon: boolean,
    resumeAfter: number | null,
    tail: number,
  ): Promise<void> {
    // `sent` counts the log's lines as the client has them (the id of the last one sent).
    let sent = resumeAfter ?? -1;
    let lastLine: string | null = null;
    while (!stream.closed.aborted) {
      try {
        if (await this.destroyed(instanceId)) {
          stream.send({
            event: 'end',
            data: JSON.stringify({ id: instanceId, msg: 'The instance was destroyed' }),
          });
          stream.end();
          return;
        }
        const current = await this.host.logs(instanceId, daemon);
        if (sent < 0) sent = Math.max(0, current.length - tail);
        const fresh = newLogLines(current, sent, lastLine);
        // A recreated container's log starts again: its lines are numbered on from the ones sent.
        for (const line of fresh) {
          sent += 1;
          stream.send({ id: String(sent), event: 'log', data: oneLine(line) });
        }
        if (fresh.length > 0) lastLine = fresh[fresh.length - 1]!;
        else if (lastLine === null && sent > 0 && current.length >= sent) lastLine = current[sent - 1]!;
      } catch (error) {
        if (stream.closed.aborted) return;
        // The host is away (503) or slow (504): the stream waits for it.
        this.logger.debug(`log stream of instance ${instanceId}: ${String(error)}`);
      }
      await sleep(LOG_POLL_MS, stream.closed);
    }
  }

  private async destroyed(instanceId: number): Promise<boolean> {
    const rows = await this.runtime.db.query<{ destroyed: boolean }>(
      `SELECT destroyed FROM ${SCHEMA}.instances WHERE instance_id = $1`,
      [instanceId],
    );
    return rows[0]?.destroyed !== false;
  }
}
