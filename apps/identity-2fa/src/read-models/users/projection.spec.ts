import { projectionSpec } from '@rigmarket/testing';
import { identityContext } from '../../identity.context';
import { usersProjection } from './projection';

describe('users projection', () => {
  const spec = projectionSpec(identityContext, usersProjection);
  afterAll(() => spec.close());

  it('registers a user, marks the e-mail verified and applies only the profile fields an update names', () =>
    spec
      .given([
        {
          streamId: 'user-2',
          type: 'UserRegistered',
          data: {
            userId: 2,
            email: 'ann@example.com',
            username: 'ann',
            fullName: 'Ann',
            isAdmin: false,
            registeredAt: '2026-05-01T12:00:00.000Z',
          },
        },
        {
          streamId: 'user-2',
          type: 'UserEmailVerified',
          data: { userId: 2, verifiedAt: '2026-05-01T12:05:00.000Z' },
        },
        { streamId: 'user-2', type: 'UserProfileUpdated', data: { userId: 2, sshKey: 'ssh-ed25519 AAAA' } },
      ])
      .when({ streamId: 'user-2', type: 'UserProfileUpdated', data: { userId: 2, fullName: 'Ann B.' } })
      .then(
        `SELECT user_id, email, username, full_name, ssh_key, is_admin, email_verified_at::text AS verified FROM identity.users`,
        [
          {
            user_id: 2,
            email: 'ann@example.com',
            username: 'ann',
            full_name: 'Ann B.',
            ssh_key: 'ssh-ed25519 AAAA',
            is_admin: false,
            verified: '2026-05-01 12:05:00+00',
          },
        ],
      ));
});
