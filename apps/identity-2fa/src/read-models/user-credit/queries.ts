import { SCHEMA } from '../../schema';

export const USER_CREDIT_TABLE = `${SCHEMA}.user_credit`;
const TABLE = USER_CREDIT_TABLE;

/** Joined into user reads: the credit column, 0 for an account the ledger has not seen. */
export const USER_CREDIT_SQL = `COALESCE((SELECT c.credit::float8 FROM ${TABLE} c WHERE c.user_id = users.user_id), 0) AS credit`;
