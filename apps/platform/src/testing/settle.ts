import { CONTEXT_SCHEMAS } from '@rigmarket/contracts';
import { type Database, projectionLag } from '@rigmarket/event-sourcing';
import { eventually } from '@rigmarket/testing';
import { ALL_CONTEXTS } from '../platform';

/** What is still on its way between the contexts: unpublished outbox rows, projection lag, reactor work. */
export async function eventsInFlight(db: Database): Promise<string[]> {
  const waiting: string[] = [];
  for (const context of ALL_CONTEXTS) {
    const schema = CONTEXT_SCHEMAS[context.context];
    const [present] = await db.query<{ found: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS found`, [
      `${schema}.outbox`,
    ]);
    if (!present?.found) continue; // a context not run here
    const [outbox] = await db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM ${schema}.outbox WHERE published_at IS NULL`,
    );
    if (Number(outbox?.n) > 0) waiting.push(`${schema} outbox ${outbox!.n}`);
    const [queued] = await db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM ${schema}.reactor_queue WHERE done_at IS NULL AND attempts < 10`,
    );
    if (Number(queued?.n) > 0) waiting.push(`${schema} reactor queue ${queued!.n}`);
    for (const projection of context.subscribedProjections) {
      const lag = await projectionLag(db, schema, projection);
      if (lag && lag.events > 0) waiting.push(`${schema}/${projection.name} lag ${lag.events}`);
    }
  }
  return waiting;
}

/**
 * The same from a running process's `GET /metrics` (embedded mode: its data folder cannot be opened while it
 * runs): the outbox depth, projection lag and reactor queue gauges that are above zero.
 */
export async function eventsInFlightFromMetrics(base: string): Promise<string[]> {
  const text = await (await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  return text
    .split('\n')
    .filter((line) => /^rigmarket_(outbox_depth|projection_lag_events|reactor_queue_depth)\{/.test(line))
    .filter((line) => Number(line.slice(line.lastIndexOf(' ') + 1)) > 0);
}

/**
 * Waits until nothing has been in flight between the contexts for `quietMs` (distributed mode: their shared
 * database read directly; embedded: the process's metrics), so that stopping them leaves every read model
 * caught up with the events. One empty look is not enough: the billing meter charges a destroyed instance's
 * last period on its next tick (every second in the crash suites), after the destroy itself has settled, and
 * a process stopped before those charges reach it is left behind them (lag that verify reports as a difference).
 */
export async function waitUntilSettled(
  inFlight: Database | (() => Promise<string[]>),
  timeoutMs = 60_000,
  quietMs = 3_000,
): Promise<void> {
  let last: string[] = [];
  let quietSince: number | null = null;
  await eventually(
    async () => {
      last = typeof inFlight === 'function' ? await inFlight() : await eventsInFlight(inFlight);
      if (last.length > 0) {
        quietSince = null;
        return undefined;
      }
      quietSince ??= Date.now();
      return Date.now() - quietSince >= quietMs ? true : undefined;
    },
    timeoutMs,
    'the events between the apps to settle',
  ).catch((error: Error) => Promise.reject(new Error(`${error.message}: ${last.join(', ')}`)));
}
