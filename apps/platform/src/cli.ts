import 'reflect-metadata';
import { CONTEXT_SCHEMAS, type ContextName } from '@rigmarket/contracts';
import { Database, EventStore, eventStoreMigration, rebuildProjection, runMigrations } from '@rigmarket/event-sourcing';
import { ALL_CONTEXTS } from './platform';

const USAGE = `Rigmarket operator tool

  rigmarket projections                      list every read model and the streams that feed it
  rigmarket rebuild <context> <projection>   drop a read model and replay it from the event store
  rigmarket rebuild --all                    rebuild every read model of every context
  rigmarket history <context> <stream-id>    print a stream's full history (e.g. identity api_key-7)
  rigmarket migrate                          apply pending migrations of every context

Storage: DATABASE_URL (PostgreSQL), else the embedded PGlite folder RIGMARKET_DATA_DIR (default ./data;
stop the embedded server first: PGlite allows one process at a time).
Contexts: ${ALL_CONTEXTS.map((c) => c.context).join(', ')}`;

function contextOf(name: string | undefined) {
  const definition = ALL_CONTEXTS.find((c) => c.context === name);
  if (!definition) throw new Error(`Unknown context ${name ?? '(none)'}; one of: ${ALL_CONTEXTS.map((c) => c.context).join(', ')}`);
  return definition;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (!command || command === '--help' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return command ? 0 : 2;
  }
  const db = await Database.connect(Database.fromEnvironment());
  try {
    switch (command) {
      case 'projections':
        for (const c of ALL_CONTEXTS) {
          for (const p of [...c.inlineProjections, ...c.subscribedProjections]) {
            process.stdout.write(`${c.context}\t${p.name}\tv${p.version}\t${p.sources.map((s) => `${s.context}/${s.streamType}`).join(',')}\n`);
          }
        }
        return 0;
      case 'migrate':
        for (const c of ALL_CONTEXTS) {
          const applied = await runMigrations(db, CONTEXT_SCHEMAS[c.context], [eventStoreMigration, ...c.migrations]);
          process.stdout.write(`${c.context}: ${applied.length ? applied.join(', ') : 'up to date'}\n`);
        }
        return 0;
      case 'rebuild': {
        const targets =
          args[0] === '--all'
            ? ALL_CONTEXTS.flatMap((c) => [...c.inlineProjections, ...c.subscribedProjections].map((p) => ({ c, p })))
            : (() => {
                const c = contextOf(args[0]);
                const p = [...c.inlineProjections, ...c.subscribedProjections].find((x) => x.name === args[1]);
                if (!p) throw new Error(`Unknown projection ${args[1] ?? '(none)'} in ${c.context}`);
                return [{ c, p }];
              })();
        for (const { c, p } of targets) {
          const started = Date.now();
          process.stdout.write(`rebuilding ${c.context}/${p.name} ... `);
          const applied = await rebuildProjection(db, CONTEXT_SCHEMAS[c.context], p);
          process.stdout.write(`${applied} events applied in ${Date.now() - started} ms\n`);
        }
        return 0;
      }
      case 'history': {
        const context = contextOf(args[0]).context as ContextName;
        if (!args[1]) throw new Error('Give a stream id, e.g. api_key-7');
        const events = await db.transaction((sql) => new EventStore(context, CONTEXT_SCHEMAS[context]).readStream(sql, args[1]!));
        if (events.length === 0) process.stderr.write(`No events in stream ${args[1]}\n`);
        for (const e of events) process.stdout.write(`${JSON.stringify(e)}\n`);
        return events.length ? 0 : 1;
      }
      default:
        process.stderr.write(`Unknown command ${command}\n\n${USAGE}\n`);
        return 2;
    }
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`error: ${(error as Error).message}\n`);
    process.exit(1);
  },
);
