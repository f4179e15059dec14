// Run by `npm run build`: keeps a fresh PGlite cluster (gzipped, ~4 MB) beside the built pglite-pool module, so
// an embedded first start unpacks it instead of running initdb (docs/operations.md, "The data folder").
// Copies made for another PGlite release or other settings are removed.
const { builtFreshClusterPath, keepOnlyCopy, writeBuiltFreshCluster } = require('../dist/pglite-pool');

if (!keepOnlyCopy(builtFreshClusterPath(), /^pglite-cluster-.*\.tar\.gz/))
  writeBuiltFreshCluster().catch((error) => {
    console.error(error);
    process.exit(1);
  });
