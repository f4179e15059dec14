import type { UserRegistered } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** Admins, from identity's users: they may set a machine's verification. */
export const adminUsersProjection = defineProjection<UserRegistered>({
  name: 'admin_users',
  version: 1,
  sources: [{ context: 'identity', streamType: 'user' }],
  tables: [`${SCHEMA}.admin_users`],
  eventTypes: ['UserRegistered'],
  async apply(sql, event) {
    if (event.type === 'UserRegistered' && event.data.isAdmin) {
      await sql.execute(`INSERT INTO ${SCHEMA}.admin_users (user_id) VALUES ($1) ON CONFLICT DO NOTHING`, [
        event.data.userId,
      ]);
    }
  },
});
