// One embedded start, step by step as apps/platform/dist/main.js takes them, timed in this fresh process:
// `node bench/boot-phases.js DATA_DIR` prints one JSON line {modulesMs, databaseMs, migrationsMs, contextsMs,
// listenMs, cpuMs, rssMb}: wall time per step (from the process's start), the CPU time of the whole start
// (user + system, less sensitive to a loaded machine than wall time), RSS once listening. bench/cases/boot.js runs it on an empty and on an existing data folder.
const started = 0; // performance.now() counts from the process's start
require('./no-rate-limits');
require('reflect-metadata');
const { Database, migrateContexts } = require('@rigmarket/event-sourcing');
const { InProcessTransport } = require('@rigmarket/messaging');
const {
  ALL_CONTEXTS,
  EMBEDDED_POLLING,
  builtMigratedCluster,
  createEmbeddedApp,
} = require('@rigmarket/platform');

async function main() {
  const phases = {};
  let last = started;
  const lap = (name) => {
    const now = performance.now();
    phases[name] = Math.round(now - last);
    last = now;
  };
  lap('modulesMs');
  // As main.js: a first start unpacks the build's migrated cluster (a folder with a cluster ignores it).
  const db = await Database.connect({
    kind: 'pglite',
    dataDir: process.argv[2],
    firstCluster: builtMigratedCluster(),
  });
  await db.query('SELECT 1');
  lap('databaseMs');
  // What ContextRuntime.start does first; the app's own start then finds every migration applied.
  await migrateContexts(db, ALL_CONTEXTS);
  lap('migrationsMs');
  const app = await createEmbeddedApp({
    db,
    transport: new InProcessTransport(),
    identity: { adminKey: 'bench-admin-key-0123456789abcdef' },
    ...EMBEDDED_POLLING,
  });
  lap('contextsMs');
  await app.listen(0, '127.0.0.1');
  lap('listenMs');
  const cpu = process.cpuUsage();
  phases.cpuMs = Math.round((cpu.user + cpu.system) / 1000);
  phases.rssMb = Math.round(process.memoryUsage().rss / 2 ** 20);
  process.stdout.write(`${JSON.stringify(phases)}\n`);
  await app.close();
  await db.close();
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
