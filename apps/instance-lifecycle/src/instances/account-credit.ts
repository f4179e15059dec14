import { ApiError, microsToDollars } from '@rigmarket/contracts';
import type { Sql } from '@rigmarket/event-sourcing';
import { accountBalanceMicros } from '../read-models/account-credit/queries';

type Queryable = Pick<Sql, 'query'>;

export const INSUFFICIENT_CREDIT = 'insufficient_credit';

/**
 * Renting (PUT /asks/) and starting an instance need a balance above zero: else 402 `insufficient_credit`
 * (docs/instances.md, Credit).
 */
export async function requirePositiveBalance(db: Queryable, userId: number, what: string): Promise<void> {
  refuseUnlessPositive(await accountBalanceMicros(db, userId), what);
}

/** requirePositiveBalance's decision, given the balance in micros. */
export function refuseUnlessPositive(balance: number, what: string): void {
  if (balance > 0) return;
  throw new ApiError(
    402,
    INSUFFICIENT_CREDIT,
    `Your balance is $${microsToDollars(balance).toFixed(2)}: ${what} needs credit above $0. Add credit, then try again.`,
    { balance: microsToDollars(balance) },
  );
}
