// Run by `npm run build`: keeps a fresh PGlite cluster (gzipped, ~4 MB) beside the built pglite-pool module, so
// an embedded first start unpacks it instead of running initdb (docs/operations.md, "The data folder").
// Copies made for another PGlite release or other settings are removed.
const { readdirSync, rmSync } = require('node:fs');
const { basename, dirname, join } = require('node:path');
const { builtFreshClusterPath, writeBuiltFreshCluster } = require('../dist/pglite-pool');

const path = builtFreshClusterPath();
const folder = dirname(path);
for (const name of readdirSync(folder))
  if (/^pglite-cluster-.*\.tar\.gz/.test(name) && name !== basename(path)) rmSync(join(folder, name));
if (!readdirSync(folder).includes(basename(path)))
  writeBuiltFreshCluster().catch((error) => {
    console.error(error);
    process.exit(1);
  });
