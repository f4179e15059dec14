export * from './decider';
export * from './clock';
export * from './database';
export * from './migrations';
export * from './event-store';
export * from './event-chain';
export * from './transport';
export * from './projections';
export * from './event-source';
export * from './dead-letters';
export * from './projection-lag';
export * from './reactors';
export * from './outbox-relay';
export * from './command-runner';
export * from './commit-signal';
export { READ_MODEL_CHANNEL, ReadModelWatch, readModelsChanged } from './read-model-signals';
export * from './versioned-answer-cache';
export * from './context-runtime';
export {
  closePglite,
  DatabaseFaultError,
  freshClusterKey,
  keepOnlyCopy,
  onDatabaseFault,
  saveCluster,
} from './pglite-pool';
export * from './nest';
export * from './ledger-balance.projection';
export * from './idle-backoff';
export * from './background-work';
export * from './stream-history';
export * from './metrics';
export * from './tracing';
