import {
  type JsonSchema,
  anyValue,
  arrayOf,
  bool,
  int,
  namedSchema,
  nullable,
  num,
  objectOf,
  str,
  succeeded,
} from '@rigmarket/http-kit';

/**
 * The identity context's wire contract for the OpenAPI document (docs/api.md "The OpenAPI document"):
 * the bodies its routes take and answer, named after the spec's resources where it has one.
 */

const TFA_METHOD = { type: 'string', enum: ['sms', 'totp', 'email'] } as const;

export const USER = namedSchema(
  'User',
  objectOf({
    id: int,
    email: str,
    username: nullable(str),
    full_name: nullable(str),
    fullname: nullable(str),
    ssh_key: nullable(str),
    credit: num,
    balance: num,
    tfa_status: { type: 'string', enum: ['enabled', 'disabled', 'legacy'] },
    email_verified: bool,
    email_verified_at: nullable(num),
    is_admin: bool,
    created_at: num,
    parent_id: nullable(int),
    host_only: bool,
    billaddress_name: nullable(str),
    billaddress_line1: nullable(str),
    billaddress_line2: nullable(str),
    billaddress_city: nullable(str),
    billaddress_zip: nullable(str),
    billaddress_country: nullable(str),
    billaddress_taxinfo: nullable(str),
    phone_number: nullable(str),
    balance_threshold_enabled: bool,
    balance_threshold: num,
    autobill_threshold: num,
  }),
);

export const API_KEY = namedSchema(
  'ApiKey',
  objectOf(
    {
      id: int,
      user_id: int,
      name: nullable(str),
      key_type: str,
      rights: anyValue,
      permissions: anyValue,
      team_id: nullable(int),
      team_name: nullable(str),
      created_at: num,
      reset_at: nullable(num),
      expires_at: nullable(num),
    },
    ['id', 'user_id', 'name', 'key_type', 'created_at'],
  ),
);

export const TEAM_ROLE = namedSchema('TeamRole', objectOf({ id: int, name: str, permissions: arrayOf(str) }));

export const TFA_METHOD_VIEW = namedSchema(
  'TfaMethod',
  objectOf({
    id: int,
    user_id: int,
    method: { type: 'string', enum: ['sms', 'totp'] },
    label: str,
    phone_number: nullable(str),
    is_primary: bool,
    fail_count: int,
    locked_until: nullable(num),
    created_at: num,
    last_used: nullable(num),
  }),
);

export const SSH_KEY = namedSchema(
  'SshKey',
  objectOf({ id: int, user_id: int, ssh_key: str, public_key: str, created_at: num }),
);

const PERMISSIONS: JsonSchema = {
  type: 'object',
  description: 'A scope: {"api": {"<category>": {}, ...}}',
};

export const BODIES = {
  register: objectOf(
    {
      email: str,
      password: str,
      username: str,
      full_name: str,
      parent_id: { type: ['string', 'integer', 'null'] },
      host_only: bool,
    },
    ['email', 'password'],
  ),
  createTeam: objectOf({ team_name: str, transfer_credit: num }, ['team_name']),
  joinTeam: objectOf({ team_id: int, token: str }),
  setUser: objectOf(
    {
      fullname: nullable(str),
      ssh_key: nullable(str),
      billaddress_name: nullable(str),
      billaddress_line1: nullable(str),
      billaddress_line2: nullable(str),
      billaddress_city: nullable(str),
      billaddress_zip: nullable(str),
      billaddress_country: nullable(str),
      billaddress_taxinfo: nullable(str),
      phone_number: nullable(str),
      balance_threshold_enabled: bool,
      balance_threshold: num,
      autobill_threshold: num,
    },
    [],
  ),
  verifyEmail: objectOf({ email: str, code: str }),
  login: objectOf({ username: str, email: str, password: str }, ['password']),
  changePassword: objectOf({ old_password: str, new_password: str }),
  createApiKey: objectOf({ name: str, permissions: PERMISSIONS, key_params: anyValue }, []),
  teamRole: objectOf({ name: str, permissions: { ...PERMISSIONS, type: ['object', 'array'] } }),
  sshKey: objectOf({ ssh_key: str, id: anyValue }, ['ssh_key']),
  legacyTfa: objectOf({ phone_number: str }, []),
  secret: objectOf({ secret: str }, []),
  proof: objectOf(
    { tfa_method: TFA_METHOD, code: str, secret: str, tfa_method_id: int, backup_code: str },
    [],
  ),
  tfaLogin: objectOf(
    { tfa_method: TFA_METHOD, code: str, secret: str, tfa_method_id: int, backup_code: str, admin: bool },
    [],
  ),
  tfaRemove: objectOf(
    {
      tfa_method: TFA_METHOD,
      code: str,
      secret: str,
      tfa_method_id: int,
      backup_code: str,
      target_id: int,
    },
    [],
  ),
  sms: objectOf({ phone_number: str, tfa_method_id: int, secret: str }, []),
  authorize: objectOf({ tfa_method: TFA_METHOD, tfa_method_id: int, backup_code: str }, []),
  authorizeConfirm: objectOf({ code: str, secret: str }, []),
  confirmNew: objectOf({ tfa_method: TFA_METHOD, code: str, secret: str, phone_number: str, label: str }, [
    'tfa_method',
    'code',
    'secret',
  ]),
  tfaUpdate: objectOf({ tfa_method_id: int, tfa_method: TFA_METHOD, label: str, is_primary: bool }, []),
} as const;

export const ANSWERS = {
  registered: succeeded({ user: USER, msg: str }),
  userUpdated: succeeded({ user: USER, msg: str }),
  subaccounts: succeeded({ users: arrayOf(USER) }),
  teamCreated: succeeded({ team_id: int, team_name: str, api_key: str, msg: str }),
  teamJoined: succeeded({ team_id: int, team_name: str, role: str, api_key: str, msg: str }),
  invited: succeeded({ team_id: int, expires_at: int, msg: str }),
  members: arrayOf(
    objectOf({
      id: nullable(int),
      email: str,
      username: nullable(str),
      role: str,
      status: { type: 'string', enum: ['member', 'invited'] },
      is_owner: bool,
      joined_at: nullable(int),
      expires_at: nullable(int),
    }),
  ),
  login: {
    oneOf: [
      { allOf: [USER, succeeded({ session_key: str })] },
      succeeded({ tfa_required: { type: 'boolean', const: true }, tfa_secret: str, msg: str }),
    ],
  },
  msg: succeeded({ msg: str }),
  passwordChanged: succeeded({ revoked_sessions: int, msg: str }),
  apiKeyCreated: succeeded({ id: int, key: str, permissions: anyValue }),
  apiKeys: succeeded({ apikeys: arrayOf(API_KEY) }),
  apiKey: succeeded({ apikey: API_KEY }),
  keyReset: succeeded({ new_api_key: str }),
  roles: succeeded({ roles: arrayOf({ allOf: [TEAM_ROLE, objectOf({ built_in: bool })] }) }),
  role: TEAM_ROLE,
  roleSaved: { allOf: [succeeded(), TEAM_ROLE] },
  tfaLogin: {
    allOf: [
      USER,
      objectOf(
        {
          success: { type: 'boolean', const: true },
          session_key: str,
          backup_codes_remaining: int,
          legacy_tfa_user: { type: 'boolean', const: true },
        },
        ['success'],
      ),
    ],
  },
  tfaRemoved: succeeded({ msg: str, remaining_methods: int }, ['msg']),
  secretSent: succeeded({ msg: str, secret: str }),
  tfaStatus: succeeded({
    tfa_enabled: bool,
    methods: arrayOf(TFA_METHOD_VIEW),
    backup_codes_remaining: int,
    new_method_authorized: bool,
  }),
  authorizeStarted: succeeded({ msg: str, secret: str }, ['msg']),
  totpSetup: succeeded({ secret: str, provisioning_uri: str }),
  methodAdded: succeeded({ msg: str, backup_codes: arrayOf(str) }, ['msg']),
  methodUpdated: succeeded({ msg: str, method: nullable(TFA_METHOD_VIEW) }),
  backupCodes: succeeded({ msg: str, backup_codes: arrayOf(str) }),
  legacyImported: succeeded({ user_id: int, tfa_status: { type: 'string', const: 'legacy' } }),
  sshKey: succeeded({ key: SSH_KEY }),
  sshKeys: succeeded({ ssh_keys: arrayOf(SSH_KEY) }),
} as const;

/** The error codes of the 2FA routes (the spec's table). */
export const TFA_ERRORS = {
  400: [
    'bad_request',
    'invalid_tfa_method',
    'missing_auth_value',
    'missing_params',
    'email_not_verified',
    '2fa_expired',
    '2fa_verification_failed',
    'challenge_not_found',
    'no_challenge_found',
    'tfa_challenge_exists',
    'no_pending_authorization',
    'untracked_2fa_found',
    'duplicate_tfa_method',
    'twilio_error',
  ],
  401: ['invalid_backup_code'],
  403: ['auth_error', 'authorization_required'],
  429: ['tfa_locked', 'sms_rate_limited', 'preauth_phone_cap'],
} as const;
