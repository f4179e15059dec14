export * from './platform';
export { builtMigratedCluster } from './migrated-cluster';
