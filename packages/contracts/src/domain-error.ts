import { ApiError } from './errors';

/**
 * Why a decider refused a command, as a code of the public API. Deciders know nothing of HTTP: the HTTP
 * edge looks each code up in one table (`DOMAIN_ERROR_HTTP` in http-kit) for its status and a default
 * message. A new code is added here and there; the compiler refuses a code the table lacks.
 */
export const DomainErrorCodes = [
  'bad_request',
  // identity: users, API keys, team roles
  'user_exists',
  'user_not_found',
  'invalid_verification_token',
  'verification_token_expired',
  'invalid_credentials',
  'wrong_password',
  'api_key_exists',
  'api_key_not_found',
  'not_owner',
  'team_role_exists',
  'team_role_not_found',
  'built_in_role',
  'invalid_ssh_key',
  'ssh_key_exists',
  'ssh_key_not_found',
  // identity: teams
  'team_exists',
  'team_not_found',
  'not_team_owner',
  'already_member',
  'invalid_invitation',
  'invitation_expired',
  'member_not_found',
  'cannot_remove_owner',
  'owner_role_not_invitable',
  'team_full',
  // identity: webhooks
  'invalid_webhook',
  'webhook_endpoint_exists',
  'webhook_endpoint_not_found',
  'webhook_endpoint_disabled',
  'webhook_delivery_not_found',
  // two-factor authentication
  '2fa_expired',
  '2fa_verification_failed',
  'authorization_required',
  'challenge_not_found',
  'duplicate_tfa_method',
  'email_not_verified',
  'invalid_backup_code',
  'invalid_tfa_method',
  'missing_auth_value',
  'missing_params',
  'no_challenge_found',
  'no_pending_authorization',
  'preauth_phone_cap',
  'sms_rate_limited',
  'tfa_challenge_exists',
  'tfa_locked',
  'untracked_2fa_found',
  // marketplace: machines, templates, volumes, ledger
  'machine_exists',
  'no_such_machine',
  'invalid_ask',
  'machine_in_use',
  'template_exists',
  'no_such_template',
  'volume_exists',
  'no_such_volume',
  'invalid_size',
  'insufficient_space',
  'invalid_amount',
  'already_billed',
  'insufficient_credit',
  // instances and allocation
  'instance_exists',
  'no_such_instance',
  'instance_cannot_start',
  'instance_not_running',
  'instance_waiting_for_volume',
  'invalid_transition',
  'not_a_bid',
  'nothing_to_update',
  'volume_mismatch',
  'offer_unavailable',
  'provisioning_ended',
  'too_many_ssh_keys',
  'snapshot_in_progress',
  'env_var_exists',
  'env_var_not_found',
  'scheduled_job_exists',
  'scheduled_job_not_found',
  'cloud_connection_exists',
  'no_such_cloud_connection',
  'no_such_backup',
  'backup_not_ready',
  // copies and maintenance
  'sync_in_progress',
  'sync_not_active',
  'maintenance_overlaps',
] as const;

export type DomainErrorCode = (typeof DomainErrorCodes)[number];

/** A command refused by a domain rule. `details` become extra fields of the Error object. */
export class DomainError extends Error {
  /** False when the decider gave only a code: the HTTP edge then answers the table's message. */
  readonly hasMessage: boolean;

  constructor(
    readonly code: DomainErrorCode,
    message?: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message ?? code);
    this.name = 'DomainError';
    this.hasMessage = message !== undefined;
  }
}

/** A refusal is a domain error or an API error: the caller's request was wrong, not the system. */
export function isRefusal(error: unknown): error is DomainError | ApiError {
  return error instanceof DomainError || error instanceof ApiError;
}

/** The code of a refusal, or undefined for any other failure. */
export function refusalCode(error: unknown): string | undefined {
  return isRefusal(error) ? error.code : undefined;
}
