import { ledgerBalanceProjection } from '@rigmarket/event-sourcing';
import { ACCOUNT_CREDIT_TABLE } from './queries';

/** Each account's balance as instance-lifecycle knows it (renting and starting need credit): the ledger's events. */
export const accountCreditProjection = ledgerBalanceProjection(
  'account_credit',
  ACCOUNT_CREDIT_TABLE,
  'balance',
);
