// Run by `npm run build`: keeps a PGlite cluster with every context's migrations applied beside the built
// platform, which an embedded first start unpacks instead of migrating (src/migrated-cluster.ts).
require('../dist/migrated-cluster')
  .writeMigratedCluster()
  .then(() => process.exit(0))
  .catch((error) => {
    console.error(error);
    process.exit(1);
  });
