import type { UserEmailVerified, UserProfileUpdated, UserRegistered } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';
import type { SubaccountRegistered, UserSettingsChanged } from '../../users/user.events';

export const usersProjection = defineProjection<
  UserRegistered | UserEmailVerified | UserProfileUpdated | UserSettingsChanged | SubaccountRegistered
>({
  name: 'users',
  version: 1,
  sources: [{ context: 'identity', streamType: 'user' }],
  tables: [`${SCHEMA}.users`],
  eventTypes: [
    'UserRegistered',
    'UserEmailVerified',
    'UserProfileUpdated',
    'UserSettingsChanged',
    'SubaccountRegistered',
  ],
  async apply(sql, event) {
    switch (event.type) {
      case 'UserRegistered':
        await sql.execute(
          `INSERT INTO ${SCHEMA}.users (user_id, email, username, full_name, is_admin, registered_at) VALUES ($1, $2, $3, $4, $5, $6)`,
          [
            event.data.userId,
            event.data.email,
            event.data.username,
            event.data.fullName,
            event.data.isAdmin,
            event.data.registeredAt,
          ],
        );
        return;
      case 'UserEmailVerified':
        await sql.execute(`UPDATE ${SCHEMA}.users SET email_verified_at = $2 WHERE user_id = $1`, [
          event.data.userId,
          event.data.verifiedAt,
        ]);
        return;
      case 'UserProfileUpdated':
        if (event.data.fullName !== undefined) {
          await sql.execute(`UPDATE ${SCHEMA}.users SET full_name = $2 WHERE user_id = $1`, [
            event.data.userId,
            event.data.fullName,
          ]);
        }
        if (event.data.sshKey !== undefined) {
          await sql.execute(`UPDATE ${SCHEMA}.users SET ssh_key = $2 WHERE user_id = $1`, [
            event.data.userId,
            event.data.sshKey,
          ]);
        }
        return;
      case 'UserSettingsChanged':
        await sql.execute(`UPDATE ${SCHEMA}.users SET settings = settings || $2::jsonb WHERE user_id = $1`, [
          event.data.userId,
          JSON.stringify(event.data.settings),
        ]);
        return;
      case 'SubaccountRegistered':
        await sql.execute(`UPDATE ${SCHEMA}.users SET parent_id = $2, host_only = $3 WHERE user_id = $1`, [
          event.data.userId,
          event.data.parentId,
          event.data.hostOnly,
        ]);
        return;
    }
  },
});
