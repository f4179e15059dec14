// First: V8's memory settings apply to everything loaded after them.
import './v8-settings';
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Database } from '@rigmarket/event-sourcing';
import { servePlatform } from '@rigmarket/http-kit';
import { DirectoryBackupStore, DirectoryLogStore } from '@rigmarket/instance-lifecycle';
import { InProcessTransport } from '@rigmarket/messaging';
import { DEMO_CREDIT, seedDemoHosts } from './demo-hosts';
import { embeddedSecrets } from './embedded-secrets';
import { builtMigratedCluster } from './migrated-cluster';
import { serveConsole } from './console-site';
import { EMBEDDED_POLLING, allContextModules } from './platform';

/**
 * Embedded mode (`npm start`): all four contexts in one process, PGlite on disk under ./data
 * (RIGMARKET_DATA_DIR), the in-process transport, on 127.0.0.1:8080 (PORT, HOST). On an empty data
 * folder it also lists demo hosts (simulated) and grants the admin demo credit, unless RIGMARKET_DEMO_HOSTS=0.
 */
async function main(): Promise<void> {
  const dataDir = resolve(process.env.RIGMARKET_DATA_DIR ?? 'data');
  const firstStart = !existsSync(dataDir) || readdirSync(dataDir).length === 0;
  mkdirSync(dataDir, { recursive: true });
  const demo = firstStart && process.env.RIGMARKET_DEMO_HOSTS !== '0';
  // The demo needs the admin key to list its hosts: generated here (and printed once) when not given.
  const generatedKey = demo && !process.env.RIGMARKET_ADMIN_KEY ? randomBytes(32).toString('hex') : undefined;
  const adminKey = process.env.RIGMARKET_ADMIN_KEY || generatedKey;
  // A first start unpacks the build's cluster with every migration applied (migrated-cluster.ts); a folder
  // that holds a cluster ignores it.
  const db = await Database.connect({ kind: 'pglite', dataDir, firstCluster: builtMigratedCluster() });
  // After the database: PGlite creates its cluster in an empty folder only.
  const { tfaKey, instanceSealKey, registryKey } = embeddedSecrets(dataDir);
  const transport = new InProcessTransport();
  const port = Number(process.env.PORT ?? 8080);
  const host = process.env.HOST ?? '127.0.0.1';
  await servePlatform({
    modules: allContextModules(
      { adminKey, adminEmail: process.env.RIGMARKET_ADMIN_EMAIL, tfaKey },
      {},
      { registryKey },
      {
        sealKey: instanceSealKey,
        registryKey,
        // Owner-only, under the data folder (RIGMARKET_LOG_DIR elsewhere); S3 when RIGMARKET_LOG_S3_BUCKET is set.
        ...(process.env.RIGMARKET_LOG_DIR || process.env.RIGMARKET_LOG_S3_BUCKET
          ? {}
          : { logStore: new DirectoryLogStore(join(dataDir, 'instance-logs')) }),
        // Instance backups: owner-only, under the data folder (RIGMARKET_BACKUP_DIR elsewhere).
        ...(process.env.RIGMARKET_BACKUP_DIR
          ? {}
          : { backupStore: new DirectoryBackupStore(join(dataDir, 'instance-backups')) }),
      },
    ),
    db,
    transport,
    ...EMBEDDED_POLLING,
    port,
    host,
    site: serveConsole,
    serviceName: 'rigmarket-platform',
  });
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  process.stdout.write(
    `Rigmarket (embedded) listening on ${url}/api/v0/ with data in ${dataDir}\n` +
      `API reference: ${url}/docs (OpenAPI document: ${url}/api/v0/openapi.json)\n` +
      `Web console: ${url}/ (log in with an API key, or sign up)\n`,
  );
  if (generatedKey)
    process.stdout.write(`\nRigmarket admin API key (shown once, keep it safe): ${generatedKey}\n\n`);
  if (demo && adminKey) {
    // A stop asked while the demo is seeded (its requests then fail) is a stop, not a failed start.
    let stopping = false;
    const onSignal = () => (stopping = true);
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    const machines = await seedDemoHosts(url, adminKey).catch((error: unknown) => {
      if (stopping) return null;
      throw error;
    });
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    if (machines === null) return;
    process.stdout.write(
      `Demo: simulated hosts listed as machines ${machines.join(', ')}; the admin account has $${DEMO_CREDIT} of credit. ` +
        `Try: VAST_URL=${url} vastai --api-key <admin key> search offers\n`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
