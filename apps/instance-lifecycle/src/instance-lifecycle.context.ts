import type { ContextDefinition } from '@rigmarket/event-sourcing';
import { authKeysMigration, authKeysProjection } from '@rigmarket/http-kit';

export const SCHEMA = 'instance_lifecycle';

/** Skeleton: event store, migrations and the bearer projection; its aggregates come with their issue. */
export const instanceLifecycleContext: ContextDefinition = {
  context: 'instance',
  migrations: [authKeysMigration()],
  inlineProjections: [],
  subscribedProjections: [authKeysProjection(SCHEMA)],
};
