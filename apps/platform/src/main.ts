import 'reflect-metadata';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Database } from '@rigmarket/event-sourcing';
import { servePlatform } from '@rigmarket/http-kit';
import { InProcessTransport } from '@rigmarket/messaging';
import { allContextModules } from './platform';

/**
 * Embedded mode (`npm start`): all four contexts in one process, PGlite on disk under ./data
 * (RIGMARKET_DATA_DIR), the in-process transport, on 127.0.0.1:8080 (PORT, HOST).
 */
async function main(): Promise<void> {
  const dataDir = resolve(process.env.RIGMARKET_DATA_DIR ?? 'data');
  mkdirSync(dataDir, { recursive: true });
  const db = await Database.connect({ kind: 'pglite', dataDir });
  const transport = new InProcessTransport();
  const port = Number(process.env.PORT ?? 8080);
  const host = process.env.HOST ?? '127.0.0.1';
  await servePlatform({
    modules: allContextModules({ adminKey: process.env.RIGMARKET_ADMIN_KEY, adminEmail: process.env.RIGMARKET_ADMIN_EMAIL }),
    db,
    transport,
    port,
    host,
  });
  process.stdout.write(`Rigmarket (embedded) listening on http://${host}:${port}/api/v0/ with data in ${dataDir}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
