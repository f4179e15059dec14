import { projectionSpec } from '@rigmarket/testing';
import { marketplaceContext } from '../../marketplace.context';
import { AT } from '../testing/events';
import { adminUsersProjection } from './projection';

const registered = (userId: number, isAdmin: boolean) => ({
  streamId: `user-${userId}`,
  type: 'UserRegistered' as const,
  data: {
    userId,
    email: `u${userId}@example.com`,
    username: null,
    fullName: null,
    isAdmin,
    registeredAt: AT,
  },
});

describe('admin_users projection', () => {
  const spec = projectionSpec(marketplaceContext, adminUsersProjection);
  afterAll(() => spec.close());

  it('knows the admins among registered users', () =>
    spec
      .given([registered(1, true), registered(2, false)])
      .when(registered(3, true))
      .then(`SELECT user_id FROM marketplace.admin_users ORDER BY 1`, [{ user_id: 1 }, { user_id: 3 }]));
});
