import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CONTEXT_SCHEMAS } from '@rigmarket/contracts';
import {
  type ContextDefinition,
  Database,
  contextMigrations,
  freshClusterKey,
  keepOnlyCopy,
  migrateContexts,
  saveCluster,
} from '@rigmarket/event-sourcing';
import { ALL_CONTEXTS } from './platform';

/**
 * A first start of the embedded platform on an empty folder ran every context's migrations on a fresh cluster
 * (~1.1 s of a ~5 s start on a 2-core machine). `npm run build` keeps a cluster with them applied beside this
 * module (scripts/write-migrated-cluster.js), and a first start unpacks it instead: its migrations then find
 * nothing to do. The file's name says which PGlite cluster and which migrations (their ids and code) it
 * holds, so a build whose migrations changed never starts from an older one. The cluster holds no secret and
 * no row of an installation's own (the embedded keys live in files beside the data, made at the first start);
 * the times its migrations wrote (`applied_at`, the projections' checkpoints) are the build's.
 */
export function migratedClusterKey(contexts: readonly ContextDefinition[] = ALL_CONTEXTS): string {
  const migrations = contexts.map((c) => [
    CONTEXT_SCHEMAS[c.context],
    contextMigrations(c).map((m) => [m.id, m.replaces ?? null, m.up.toString()]),
  ]);
  return createHash('sha256')
    .update(JSON.stringify([freshClusterKey(), migrations]))
    .digest('hex')
    .slice(0, 16);
}

const NAME = /^pglite-migrated-[0-9a-f]{16}\.tar\.gz$/;

export function migratedClusterPath(folder: string = __dirname): string {
  return join(folder, `pglite-migrated-${migratedClusterKey()}.tar.gz`);
}

/** The build's migrated cluster for these migrations, or undefined (a first start then migrates as before). */
export function builtMigratedCluster(folder: string = __dirname): string | undefined {
  const path = migratedClusterPath(folder);
  return existsSync(path) ? path : undefined;
}

/**
 * Writes the migrated cluster into `folder` (unless there already) and removes those of other migrations.
 * Every context's migrations run on an in-memory engine, which is then dumped, gzipped.
 */
export async function writeMigratedCluster(folder: string = __dirname): Promise<string> {
  const path = migratedClusterPath(folder);
  if (keepOnlyCopy(path, NAME)) return path;
  const db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
  try {
    await migrateContexts(db, ALL_CONTEXTS);
    await saveCluster('memory://', path);
  } finally {
    await db.close();
  }
  return path;
}
