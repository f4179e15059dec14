import type { ContextDefinition } from '@rigmarket/event-sourcing';
import { authKeysMigration, authKeysProjection } from '@rigmarket/http-kit';

export const SCHEMA = 'sync_maintenance';

/** Skeleton: event store, migrations and the bearer projection; its aggregates come with their issue. */
export const syncMaintenanceContext: ContextDefinition = {
  context: 'sync',
  migrations: [authKeysMigration()],
  inlineProjections: [],
  subscribedProjections: [authKeysProjection(SCHEMA)],
};
