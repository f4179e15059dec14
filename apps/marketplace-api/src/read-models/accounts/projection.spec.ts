import { projectionSpec } from '@rigmarket/testing';
import { marketplaceContext } from '../../marketplace.context';
import { AT } from '../testing/events';
import { accountsProjection } from './projection';

const registered = (userId: number, email: string) => ({
  streamId: `user-${userId}`,
  type: 'UserRegistered' as const,
  data: { userId, email, username: null, fullName: null, isAdmin: false, registeredAt: AT },
});

describe('accounts projection (the directory credit transfers name recipients in)', () => {
  const spec = projectionSpec(marketplaceContext, accountsProjection);
  afterAll(() => spec.close());

  it('keeps every registered account with its e-mail', () =>
    spec
      .given([registered(1, 'admin@localhost'), registered(2, 'Ann@Example.com')])
      .when(registered(3, 'bob@example.com'))
      .then(`SELECT user_id, email FROM marketplace.accounts ORDER BY 1`, [
        { user_id: 1, email: 'admin@localhost' },
        { user_id: 2, email: 'Ann@Example.com' },
        { user_id: 3, email: 'bob@example.com' },
      ]));
});
