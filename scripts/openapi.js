// Writes docs/openapi.json: the OpenAPI document of the whole platform (the embedded app holds every
// context's controllers, so its document is the four apps' documents merged). The distributed edge serves
// this file; openapi.e2e-spec fails when it differs from what the code generates. Run: npm run openapi
'use strict';
require('reflect-metadata');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { Database } = require('@rigmarket/event-sourcing');
const { InProcessTransport } = require('@rigmarket/messaging');
const { buildOpenApiDocument } = require('@rigmarket/http-kit');
const { createEmbeddedApp } = require('../apps/platform/dist/platform');

async function main() {
  const db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
  const app = await createEmbeddedApp({
    db,
    transport: new InProcessTransport(),
    identity: { adminKey: 'openapi-generator' },
  });
  try {
    const file = join(__dirname, '..', 'docs', 'openapi.json');
    writeFileSync(file, `${JSON.stringify(buildOpenApiDocument(app), null, 2)}\n`);
    process.stdout.write(`wrote ${file}\n`);
  } finally {
    await app.close();
    await db.close();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exit(1);
  },
);
