import { defineProjection } from '@rigmarket/event-sourcing';
import type { EnvVarEvent } from '../../env-vars/env-var.decider';
import { SCHEMA } from '../../schema';

/** Each account's environment variables, their values as sealed in the events. */
export const envVarsProjection = defineProjection<EnvVarEvent>({
  name: 'env_vars',
  version: 1,
  sources: [{ context: 'instance', streamType: 'env_vars' }],
  tables: [`${SCHEMA}.env_vars`],
  eventTypes: ['EnvVarSet', 'EnvVarDeleted'],
  async apply(sql, event) {
    switch (event.type) {
      case 'EnvVarSet':
        await sql.execute(
          `INSERT INTO ${SCHEMA}.env_vars (user_id, name, value_sealed, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
           ON CONFLICT (user_id, name) DO UPDATE SET value_sealed = EXCLUDED.value_sealed, updated_at = EXCLUDED.updated_at`,
          [event.data.userId, event.data.name, event.data.valueSealed, event.data.at],
        );
        return;
      case 'EnvVarDeleted':
        await sql.execute(`DELETE FROM ${SCHEMA}.env_vars WHERE user_id = $1 AND name = $2`, [
          event.data.userId,
          event.data.name,
        ]);
        return;
    }
  },
});
