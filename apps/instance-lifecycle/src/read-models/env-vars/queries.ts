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
  const rows = await sql.query<{ name: string; value_sealed: string }>(
    `SELECT name, value_sealed FROM ${SCHEMA}.env_vars WHERE user_id = $1 ORDER BY name`,
    [userId],
  );
  const vars: Record<string, string> = {};
  const unopened: string[] = [];
  for (const row of rows) {
    const value = box.open(row.value_sealed, userId, row.name);
    if (value === null) unopened.push(row.name);
    else vars[row.name] = value;
  }
  return { vars, unopened };
}
