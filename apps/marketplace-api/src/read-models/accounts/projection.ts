import type { UserRegistered } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** Every account's e-mail, from identity's users: a credit transfer names its recipient by e-mail or id. */
export const accountsProjection = defineProjection<UserRegistered>({
  name: 'accounts',
  version: 1,
  sources: [{ context: 'identity', streamType: 'user' }],
  tables: [`${SCHEMA}.accounts`],
  eventTypes: ['UserRegistered'],
  async apply(sql, event) {
    await sql.execute(
      `INSERT INTO ${SCHEMA}.accounts (user_id, email) VALUES ($1, $2) ON CONFLICT (user_id) DO UPDATE SET email = EXCLUDED.email`,
      [event.data.userId, event.data.email],
    );
  },
});
