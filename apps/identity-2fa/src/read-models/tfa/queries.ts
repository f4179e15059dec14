import { SCHEMA } from '../../schema';

/** users/current's tfa_status, derived from the read model. */
export const TFA_STATUS_SQL = `(SELECT CASE WHEN t.legacy THEN 'legacy' WHEN t.enabled THEN 'enabled' ELSE 'disabled' END
  FROM ${SCHEMA}.tfa_accounts t WHERE t.user_id = ${SCHEMA}.users.user_id) AS tfa_status`;
