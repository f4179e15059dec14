import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ApiError } from '@rigmarket/contracts';
import { onHttpDrain } from '@rigmarket/http-kit';
import type { Request, Response } from 'express';

/** Limits and timings of the live streams (docs/instances.md "Live streams"); each has its environment variable. */
export interface SseOptions {
  /** Streams one account may hold open at once (RIGMARKET_SSE_MAX_PER_USER, default 5): beyond, 429. */
  maxPerUser: number;
  /** Streams the process holds open at once (RIGMARKET_SSE_MAX, default 500): beyond, 503. */
  maxTotal: number;
  /** A `: ping` comment line this often keeps proxies from closing an idle stream (RIGMARKET_SSE_HEARTBEAT_MS, 15 s). */
  heartbeatMs: number;
}

function positiveEnv(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

export function sseOptionsFromEnvironment(): SseOptions {
  return {
    maxPerUser: positiveEnv('RIGMARKET_SSE_MAX_PER_USER', 5),
    maxTotal: positiveEnv('RIGMARKET_SSE_MAX', 500),
    heartbeatMs: positiveEnv('RIGMARKET_SSE_HEARTBEAT_MS', 15_000),
  };
}

/** One open `text/event-stream` response. */
export interface SseStream {
  /** Fires when the client went away or the server ends the stream (shutdown). */
  readonly closed: AbortSignal;
  /** One event: `id` (what the client sends back as Last-Event-ID), `event` (its name) and its data lines. */
  send(message: { id?: string; event?: string; data: string }): void;
  /** Ends the stream from the server's side. */
  end(): void;
}

/** A field value of the event-stream format: no line breaks (each data line is its own `data:` field). */
function dataLines(data: string): string {
  return data
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}\n`)
    .join('');
}

/**
 * Opens Server-Sent Events responses within the limits, sends heartbeats, and ends every stream when the
 * process stops (HTTP drain or module shutdown), so a server with open streams still stops in time.
 */
@Injectable()
export class SseConnections implements OnModuleInit, OnModuleDestroy {
  private readonly open = new Map<number, Set<() => void>>();
  private total = 0;
  private removeDrainListener: (() => void) | undefined;
  private stopping = false;

  constructor(readonly options: SseOptions = sseOptionsFromEnvironment()) {}

  onModuleInit(): void {
    this.removeDrainListener = onHttpDrain(() => this.endAll());
  }

  onModuleDestroy(): void {
    this.removeDrainListener?.();
    this.endAll();
  }

  /** How many streams are open (for tests). */
  get count(): number {
    return this.total;
  }

  /**
   * Counts the stream against the caller's and the process's limits (429 / 503 Error objects beyond them,
   * before anything is written), then writes the event-stream headers.
   */
  start(userId: number, request: Request, response: Response): SseStream {
    if (this.stopping)
      throw new ApiError(503, 'service_unavailable', 'The server is stopping; reconnect in a moment', {
        retry_after: 1,
      });
    const mine = this.open.get(userId) ?? new Set<() => void>();
    if (mine.size >= this.options.maxPerUser)
      throw new ApiError(
        429,
        'too_many_streams',
        `At most ${this.options.maxPerUser} live streams per account are open at once; close one first`,
        { retry_after: 5 },
      );
    if (this.total >= this.options.maxTotal)
      throw new ApiError(
        503,
        'too_many_streams',
        'The server holds as many live streams as it can; retry later',
        {
          retry_after: 5,
        },
      );
    const controller = new AbortController();
    // The first ping goes out a heartbeat after the headers below.
    const heartbeat = setInterval(() => response.write(': ping\n\n'), this.options.heartbeatMs);
    const end = () => {
      if (controller.signal.aborted) return;
      clearInterval(heartbeat);
      mine.delete(end);
      if (mine.size === 0) this.open.delete(userId);
      this.total -= 1;
      controller.abort();
      if (!response.writableEnded) response.end();
    };
    mine.add(end);
    this.open.set(userId, mine);
    this.total += 1;
    response.status(200);
    response.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    response.setHeader('Cache-Control', 'no-cache, no-transform');
    // nginx (the distributed edge) passes the stream through unbuffered (also set per route in infra/nginx).
    response.setHeader('X-Accel-Buffering', 'no');
    response.flushHeaders();
    request.socket.setNoDelay(true);
    request.socket.setKeepAlive(true);
    // A reconnecting client waits this long (the EventSource default is about 3 s).
    response.write('retry: 2000\n\n');
    response.once('close', end);
    return {
      closed: controller.signal,
      send: ({ id, event, data }) => {
        if (controller.signal.aborted) return;
        response.write(
          `${id !== undefined ? `id: ${id}\n` : ''}${event ? `event: ${event}\n` : ''}${dataLines(data)}\n`,
        );
      },
      end,
    };
  }

  private endAll(): void {
    this.stopping = true;
    for (const streams of [...this.open.values()]) for (const end of [...streams]) end();
  }
}
