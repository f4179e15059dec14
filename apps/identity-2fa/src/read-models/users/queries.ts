import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';
import { CURRENT_SSH_KEY_SQL } from '../ssh-keys/queries';
import { TFA_STATUS_SQL } from '../tfa/queries';
import { USER_CREDIT_SQL } from '../user-credit/queries';
import type { UserSettings } from '../../users/user.events';

// Reading a user from the users read model (with its 2FA status and credit), and the user object the API
// returns (users/current, logins).

export interface UserView {
  id: number;
  email: string;
  username: string | null;
  full_name: string | null;
  fullname: string | null;
  ssh_key: string | null;
  credit: number;
  balance: number;
  tfa_status: 'enabled' | 'disabled' | 'legacy';
  email_verified: boolean;
  email_verified_at: number | null;
  is_admin: boolean;
  created_at: number;
  /** The account that created this one (a subaccount), or null. */
  parent_id: number | null;
  host_only: boolean;
  billaddress_name: string | null;
  billaddress_line1: string | null;
  billaddress_line2: string | null;
  billaddress_city: string | null;
  billaddress_zip: string | null;
  billaddress_country: string | null;
  billaddress_taxinfo: string | null;
  phone_number: string | null;
  balance_threshold_enabled: boolean;
  balance_threshold: number;
  autobill_threshold: number;
}

export interface UserRow {
  user_id: number;
  email: string;
  username: string | null;
  full_name: string | null;
  ssh_key: string | null;
  is_admin: boolean;
  email_verified_at: string | Date | null;
  registered_at: string | Date;
  tfa_status?: 'enabled' | 'disabled' | 'legacy' | null;
  current_ssh_key?: string | null;
  credit?: number | string | null;
  parent_id?: number | null;
  host_only?: boolean;
  settings?: UserSettings | string | null;
}

const epoch = (value: string | Date | null): number | null =>
  value === null ? null : new Date(value).getTime() / 1000;

export function toUserView(row: UserRow): UserView {
  const settings: UserSettings =
    typeof row.settings === 'string' ? (JSON.parse(row.settings) as UserSettings) : (row.settings ?? {});
  return {
    id: Number(row.user_id),
    email: row.email,
    username: row.username,
    full_name: row.full_name,
    fullname: row.full_name,
    ssh_key: row.current_ssh_key ?? row.ssh_key,
    // Projected from marketplace's billing ledger (read-models/user-credit/).
    credit: Number(row.credit ?? 0),
    balance: Number(row.credit ?? 0),
    tfa_status: row.tfa_status ?? 'disabled',
    email_verified: row.email_verified_at !== null,
    email_verified_at: epoch(row.email_verified_at),
    is_admin: row.is_admin,
    created_at: epoch(row.registered_at) ?? 0,
    parent_id: row.parent_id === null || row.parent_id === undefined ? null : Number(row.parent_id),
    host_only: row.host_only ?? false,
    billaddress_name: settings.billaddress_name ?? null,
    billaddress_line1: settings.billaddress_line1 ?? null,
    billaddress_line2: settings.billaddress_line2 ?? null,
    billaddress_city: settings.billaddress_city ?? null,
    billaddress_zip: settings.billaddress_zip ?? null,
    billaddress_country: settings.billaddress_country ?? null,
    billaddress_taxinfo: settings.billaddress_taxinfo ?? null,
    phone_number: settings.phone_number ?? null,
    balance_threshold_enabled: settings.balance_threshold_enabled ?? false,
    balance_threshold: settings.balance_threshold ?? 0,
    autobill_threshold: settings.autobill_threshold ?? 0,
  };
}

export async function findUser(
  runtime: ContextRuntime,
  where: string,
  value: unknown,
): Promise<UserRow | undefined> {
  const rows = await runtime.db.query<UserRow>(
    `SELECT *, ${TFA_STATUS_SQL}, ${USER_CREDIT_SQL}, ${CURRENT_SSH_KEY_SQL} FROM ${SCHEMA}.users WHERE ${where}`,
    [value],
  );
  return rows[0];
}

/** A parent account's subaccounts, oldest first (bounded: an account holds at most a few hundred). */
export async function findSubaccounts(
  runtime: ContextRuntime,
  parentId: number,
  limit: number,
): Promise<UserRow[]> {
  return runtime.db.query<UserRow>(
    `SELECT *, ${TFA_STATUS_SQL}, ${USER_CREDIT_SQL}, ${CURRENT_SSH_KEY_SQL} FROM ${SCHEMA}.users
     WHERE parent_id = $1 ORDER BY user_id LIMIT $2`,
    [parentId, limit],
  );
}
