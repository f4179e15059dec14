import { ledgerBalanceProjection } from '@rigmarket/event-sourcing';
import { USER_CREDIT_TABLE } from './queries';

/** Each account's credit, summed from marketplace's ledger by the same rule (ledgerDeltaMicros) as its balances. */
export const userCreditProjection = ledgerBalanceProjection('user_credit', USER_CREDIT_TABLE, 'credit');
