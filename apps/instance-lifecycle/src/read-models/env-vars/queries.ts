import type { Sql } from '@rigmarket/event-sourcing';
import type { EnvVarBox } from '../../env-vars/env-var-box';
import { SCHEMA } from '../../schema';

/**
 * The account's environment variables, opened, by name. A value that no longer opens (the seal key changed)
 * is left out and named in `unopened`.
 */
export async function accountEnvVars(
  sql: Sql,
  box: EnvVarBox,
  userId: number,
): Promise<{ vars: Record<string, string>; unopened: string[] }> {
  const rows = await sql.query<SealedEnvVar>(
    `SELECT name, value_sealed FROM ${SCHEMA}.env_vars WHERE user_id = $1 ORDER BY name`,
    [userId],
  );
  return openEnvVars(box, userId, rows);
}

/** A row of env_vars as stored: the value sealed (EnvVarBox). */
export interface SealedEnvVar {
  name: string;
  value_sealed: string;
}

/** The account's variables as read by a caller's own query (in name order), opened as accountEnvVars does. */
export function openEnvVars(
  box: EnvVarBox,
  userId: number,
  rows: readonly SealedEnvVar[],
): { vars: Record<string, string>; unopened: string[] } {
  const vars: Record<string, string> = {};
  const unopened: string[] = [];
  for (const row of rows) {
    const value = box.open(row.value_sealed, userId, row.name);
    if (value === null) unopened.push(row.name);
    else vars[row.name] = value;
  }
  return { vars, unopened };
}

/**
 * The account's sealed variables in name order as a JSON array of {name, value_sealed}, as a column
 * expression over a user id expression (for a query that reads them with other rows).
 */
export const sealedEnvVarsOf = (userId: string): string =>
  `(SELECT COALESCE(json_agg(json_build_object('name', v.name, 'value_sealed', v.value_sealed) ORDER BY v.name), '[]'::json)
      FROM ${SCHEMA}.env_vars v WHERE v.user_id = ${userId})`;
