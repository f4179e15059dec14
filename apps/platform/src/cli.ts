import 'reflect-metadata';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { Transform } from 'node:stream';
import { finished } from 'node:stream/promises';
import { CONTEXT_SCHEMAS, type ContextName, streamTypeOf } from '@rigmarket/contracts';
import {
  Database,
  EventStore,
  projectionLag,
  type Sql,
  contextProjections,
  parkedEvents,
  retryParkedEvents,
  migrateContexts,
} from '@rigmarket/event-sourcing';
import { eventSourceFromEnvironment } from '@rigmarket/messaging';
import { httpInstanceFetcher, pollUntilRunning } from './instance-poll';
import { exportEvents, importAndRebuild } from './event-export';
import { operatorOutput } from './operator-output';
import { ALL_CONTEXTS } from './platform';
import { VERIFY_CHECKS, rebuildAll, verify, verifyChains } from './verify';

const USAGE = `Rigmarket operator tool

  rigmarket projections                      every read model: its sources, lag (source events not yet
                                             applied), parked events and the last error; parked reactors
  rigmarket retry                            re-apply every parked event (after fixing its cause): exits 1
                                             if some still fail
  rigmarket rebuild <context> <projection>   drop a read model and replay it from the event store
  rigmarket rebuild --all                    rebuild every read model of every context (each one reported;
                                             exits 1 if any failed, after trying all of them)
  rigmarket verify                           replay every read model in a rolled-back transaction and diff
                                             it with the live one (printing the differing rows), then run
                                             the invariant checks (ledger balances); exits 1 on any difference
  rigmarket verify --chain                   walk every context's hash chain: print each head hash (publish
                                             it) or the first broken link (edited, deleted or reordered
                                             event); exits 1 on a broken link
  rigmarket export <file>                    every context's events with their chain hashes as NDJSON
                                             (- for stdout); refuses a store whose chain is broken
  rigmarket import <file>                    load an export into an empty deployment (migrating it first),
                                             checking every chain link; then rebuild every read model and
                                             verify (read models and chains); exits 1 on any problem
  rigmarket history <context> <stream-id> [--as-of <unix seconds>]
                                             print a stream's history (e.g. identity api_key-7); with --as-of,
                                             the events up to then and, last, the object's state then
  rigmarket migrate                          apply pending migrations of every context
  rigmarket wait-running <instance-id> [--timeout-s 600] [--interval-s 10]
                                             a renter's poll loop: exits 0 once running, 3 at once when the
                                             instance is exited/unknown/offline/stopped/gone (with the
                                             reason), 4 on timeout; RIGMARKET_URL (default
                                             http://127.0.0.1:8080) and RIGMARKET_API_KEY

On a terminal, rebuild, verify, export and import show a progress bar, and projections, verify --chain,
export and import end with a table; piped or redirected, they print plain lines only.

Storage: DATABASE_URL (PostgreSQL), else the embedded PGlite folder RIGMARKET_DATA_DIR (default ./data;
stop the embedded server first: PGlite allows one process at a time).
Contexts: ${ALL_CONTEXTS.map((c) => c.context).join(', ')}`;

function contextOf(name: string | undefined) {
  const definition = ALL_CONTEXTS.find((c) => c.context === name);
  if (!definition)
    throw new Error(
      `Unknown context ${name ?? '(none)'}; one of: ${ALL_CONTEXTS.map((c) => c.context).join(', ')}`,
    );
  return definition;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (!command || command === '--help' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return command ? 0 : 2;
  }
  if (command === 'wait-running') return waitRunning(args);
  const db = await Database.connect(Database.fromEnvironment());
  // Progress bars and tables on a terminal; the plain lines scripts parse otherwise (operator-output.ts).
  const out = operatorOutput(process.stdout);
  try {
    switch (command) {
      case 'projections': {
        const parked = await parkedEvents(db);
        const rows: string[][] = [];
        for (const c of ALL_CONTEXTS) {
          const schema = CONTEXT_SCHEMAS[c.context];
          for (const p of contextProjections(c)) {
            const mine = parked.find((x) => x.schema === schema && x.subscriber === p.name);
            rows.push([
              c.context,
              p.name,
              `v${p.version}`,
              p.sources.map((s) => `${s.context}/${s.streamType}`).join(','),
              String((await projectionLag(db, schema, p))?.events ?? '-'),
              String(mine?.parked ?? 0),
              mine?.lastError ?? '',
            ]);
          }
        }
        for (const r of parked.filter((x) => x.subscriber.startsWith('reactor:')))
          rows.push([r.schema, r.subscriber, '', '', '', String(r.parked), r.lastError]);
        if (process.stdout.isTTY)
          out.table(
            ['context', 'read model', 'version', 'sources', 'lag', 'parked', 'last error'],
            rows.map((row) => row.map((cell, i) => (i === 3 ? cell.replaceAll(',', '\n') : cell))),
          );
        else
          for (const [context, name, version, sources, lag, parkedCount, lastError] of rows)
            process.stdout.write(
              version
                ? `${context}\t${name}\t${version}\t${sources}\tlag ${lag}\tparked ${parkedCount}${lastError ? `\tlast error: ${lastError}` : ''}\n`
                : `${context}\t${name}\tparked ${parkedCount}\tlast error: ${lastError}\n`,
            );
        return 0;
      }
      case 'retry': {
        let remaining = 0;
        for (const c of ALL_CONTEXTS) {
          const schema = CONTEXT_SCHEMAS[c.context];
          if (!(await tablePresent(db, `${schema}.dead_letters`))) continue;
          const result = await retryParkedEvents(db, schema, c.subscribedProjections);
          // parked reactor items go back to the reactor worker of the running platform
          const requeued = await db.execute(
            `UPDATE ${schema}.reactor_queue SET attempts = 0, claimed_until = now() WHERE done_at IS NULL AND attempts >= 10`,
          );
          remaining += result.remaining;
          process.stdout.write(
            `${c.context}: ${result.applied} parked event(s) applied, ${result.remaining} still failing, ${requeued} reactor item(s) requeued\n`,
          );
        }
        return remaining ? 1 : 0;
      }
      case 'migrate': {
        const applied = await migrateContexts(db, ALL_CONTEXTS);
        ALL_CONTEXTS.forEach((c, i) => {
          const ids = applied[i] ?? [];
          process.stdout.write(`${c.context}: ${ids.length ? ids.join(', ') : 'up to date'}\n`);
        });
        return 0;
      }
      case 'rebuild': {
        const targets =
          args[0] === '--all'
            ? ALL_CONTEXTS.flatMap((c) => contextProjections(c).map((p) => ({ c, p })))
            : (() => {
                const c = contextOf(args[0]);
                const p = contextProjections(c).find((x) => x.name === args[1]);
                if (!p) throw new Error(`Unknown projection ${args[1] ?? '(none)'} in ${c.context}`);
                return [{ c, p }];
              })();
        const failed = await rebuildAll(
          db,
          targets,
          out.line,
          eventSourceFromEnvironment('rigmarket-cli'),
          out.progress,
        );
        return failed ? 1 : 0;
      }
      case 'verify': {
        if (args[0] === '--chain') {
          const chains = await verifyChains(db, ALL_CONTEXTS, out.line, out.progress);
          out.close();
          if (process.stdout.isTTY)
            out.table(
              ['context', 'events', 'head hash (publish it)', 'at global position'],
              chains.verdicts.map(({ context, report }) => [
                context,
                report.events,
                report.broken ? 'BROKEN' : report.head,
                report.broken ? report.broken.globalPosition : (report.recordedHead?.globalPosition ?? '0'),
              ]),
            );
          out.line(chains.ok ? 'verify --chain: ok' : 'verify --chain: BROKEN');
          return chains.ok ? 0 : 1;
        }
        const report = await verify(db, ALL_CONTEXTS, out.line, VERIFY_CHECKS, out.progress);
        out.close();
        out.line(report.ok ? 'verify: ok' : 'verify: DIFFERENCES FOUND');
        return report.ok ? 0 : 1;
      }
      case 'export': {
        if (!args[0]) throw new Error('Give a file to write, or - for stdout');
        const file = args[0] === '-' ? process.stdout : createWriteStream(args[0], { flags: 'wx' });
        // The events may go to stdout: progress and the summary go to stderr.
        const err = operatorOutput(process.stderr);
        const summaries = await exportEvents(db, ALL_CONTEXTS, file, err.progress);
        err.close();
        if (file !== process.stdout) {
          file.end();
          await finished(file);
        }
        if (process.stderr.isTTY)
          err.table(
            ['context', 'events exported', 'head hash'],
            summaries.map((s) => [s.context, s.events, s.head]),
          );
        else
          for (const s of summaries)
            process.stderr.write(`exported ${s.context}: ${s.events} event(s), head ${s.head}\n`);
        return 0;
      }
      case 'import': {
        if (!args[0]) throw new Error('Give the export file to load');
        // Loading advances with the bytes read (counted on the way, keeping the stream's backpressure);
        // rebuilding and verifying with their read models.
        out.progress.phase('import', statSync(args[0]).size);
        const input = createReadStream(args[0]).pipe(
          new Transform({
            transform(chunk: Buffer, _encoding, done) {
              out.progress.step(chunk.length);
              done(null, chunk);
            },
          }),
        );
        const ok = await importAndRebuild(db, ALL_CONTEXTS, input, out.line, out.progress);
        out.close();
        out.line(ok ? 'import: ok' : 'import: DIFFERENCES FOUND');
        return ok ? 0 : 1;
      }
      case 'history': {
        const definition = contextOf(args[0]);
        const context = definition.context as ContextName;
        const streamId = args[1];
        if (!streamId) throw new Error('Give a stream id, e.g. api_key-7');
        const asOfAt = args.indexOf('--as-of');
        const asOfSeconds = asOfAt >= 0 ? Number(args[asOfAt + 1]) : undefined;
        if (asOfSeconds !== undefined && !(Number.isFinite(asOfSeconds) && asOfSeconds >= 0))
          throw new Error('--as-of takes a time in Unix seconds');
        const all = await db.transaction((sql) =>
          new EventStore(context, CONTEXT_SCHEMAS[context]).readStream(sql, streamId),
        );
        const events =
          asOfSeconds === undefined ? all : all.filter((e) => Date.parse(e.occurredAt) <= asOfSeconds * 1000);
        if (events.length === 0) process.stderr.write(`No events in stream ${streamId}\n`);
        for (const e of events) process.stdout.write(`${JSON.stringify(e)}\n`);
        const fold = definition.folds?.[streamTypeOf(streamId)];
        if (asOfSeconds !== undefined && fold && events.length > 0) {
          // The object as its events had made it then: the last line, after the events that made it.
          const state = events.reduce(
            (folded, e) => fold.evolve(folded, { type: e.type, data: e.data }),
            fold.initialState(),
          );
          process.stdout.write(`${JSON.stringify({ as_of: asOfSeconds, version: events.length, state })}\n`);
        }
        return events.length ? 0 : 1;
      }
      default:
        process.stderr.write(`Unknown command ${command}\n\n${USAGE}\n`);
        return 2;
    }
  } finally {
    out.close();
    await db.close();
  }
}

async function tablePresent(sql: Sql, table: string): Promise<boolean> {
  const [row] = await sql.query<{ found: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS found`, [table]);
  return row?.found === true;
}

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const value = Number(args[i + 1]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} needs a positive number of seconds`);
  return value;
}

async function waitRunning(args: string[]): Promise<number> {
  const id = Number(args[0]);
  if (!Number.isInteger(id) || id < 1)
    throw new Error('Give an instance id: rigmarket wait-running <instance-id>');
  const apiKey = process.env.RIGMARKET_API_KEY;
  if (!apiKey) throw new Error("Set RIGMARKET_API_KEY to the renter's API key");
  const result = await pollUntilRunning(
    id,
    httpInstanceFetcher(process.env.RIGMARKET_URL ?? 'http://127.0.0.1:8080', apiKey, id),
    {
      timeoutMs: option(args, '--timeout-s', 600) * 1000,
      intervalMs: option(args, '--interval-s', 10) * 1000,
      onProgress: (row, waited) =>
        process.stderr.write(
          `instance ${id}: ${row?.actual_status ?? 'provisioning'} (${Math.round(waited / 1000)} s)\n`,
        ),
    },
  );
  (result.outcome === 'running' ? process.stdout : process.stderr).write(`${result.message}\n`);
  return result.outcome === 'running' ? 0 : result.outcome === 'timeout' ? 4 : 3;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`error: ${(error as Error).message}\n`);
    process.exit(1);
  },
);
