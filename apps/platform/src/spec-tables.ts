/**
 * The owner's API contract tables (the GPU rental API specification, "Resources and their fields" and
 * "Endpoints"), written out once: for each of the spec's 29 endpoints, the request and response fields it
 * names, with their types and whether they are required. openapi-spec.spec.ts compares docs/openapi.json
 * against them. Keep them as the spec says, not as the code does: a difference is for the code to fix.
 *
 * A field path walks into objects with `.` and into array items with `[]` (`instances[].ssh_port`).
 * `required`: true when the spec says the field is required (requests) or always present (responses); false
 * when it is optional or conditional; absent when the spec does not say.
 */
export type SpecType = 'integer' | 'number' | 'string' | 'boolean' | 'array' | 'object' | 'null';

export interface SpecField {
  /** One type, or several for "string or null". */
  readonly type: SpecType | readonly SpecType[];
  readonly required?: boolean;
}

export interface SpecEndpoint {
  readonly method: 'get' | 'post' | 'put' | 'delete';
  /** As the spec writes it (its trailing slash dropped, path parameters named as the spec names them). */
  readonly path: string;
  readonly request?: Readonly<Record<string, SpecField>>;
  readonly query?: Readonly<Record<string, SpecField>>;
  readonly response?: Readonly<Record<string, SpecField>>;
}

const f = (type: SpecField['type'], required?: boolean): SpecField =>
  required === undefined ? { type } : { type, required };
const req = (type: SpecField['type']) => f(type, true);
const opt = (type: SpecField['type']) => f(type, false);

const USER = {
  id: req('integer'),
  email: req('string'),
  credit: req('number'),
  ssh_key: req('string'),
  full_name: req('string'),
  tfa_status: req('string'),
};

const INSTANCE = (prefix: string) => ({
  [`${prefix}.id`]: req('integer'),
  [`${prefix}.actual_status`]: req(['string', 'null']),
  [`${prefix}.label`]: req('string'),
  [`${prefix}.ssh_host`]: req('string'),
  [`${prefix}.ssh_port`]: req('integer'),
});

const CREATION = {
  image: opt('string'), // required unless template_hash_id is given
  template_hash_id: opt('string'),
  label: opt('string'),
  disk: opt('number'),
  runtype: opt('string'),
  target_state: opt('string'),
  price: opt('number'),
  env: opt('object'),
  onstart: opt('string'),
  args_str: opt('string'),
  use_jupyter_lab: opt('boolean'),
  jupyter_dir: opt('string'),
  python_utf8: opt('boolean'),
  lang_utf8: opt('boolean'),
  image_login: opt('string'),
  cancel_unavail: opt('boolean'),
  vm: opt('boolean'),
  volume_info: opt('object'),
  'volume_info.create_new': opt('boolean'),
  'volume_info.volume_id': f('integer'),
  'volume_info.size': opt('number'),
  'volume_info.mount_path': f('string'),
};

const TEMPLATE_FIELDS = {
  name: req('string'),
  image: req('string'),
  tag: opt('string'),
  desc: opt('string'),
  readme: opt('string'),
  env: opt('string'),
  onstart: opt('string'),
  runtype: opt('string'),
  args_str: opt('string'),
  ssh_direct: opt('boolean'),
  use_ssh: opt('boolean'),
  jup_direct: opt('boolean'),
  jupyter_dir: opt(['string', 'null']),
  use_jupyter_lab: opt('boolean'),
  docker_login_repo: req('string'),
  docker_login_user: req('string'),
  docker_login_pass: req('string'),
  href: opt('string'),
  repo: opt('string'),
  extra_filters: opt('object'),
  recommended_disk_space: opt('number'),
  private: opt('boolean'),
  volume_info: opt(['object', 'null']),
};

const TFA_PROOF = {
  tfa_method: opt('string'),
  code: opt('string'),
  secret: opt('string'),
  tfa_method_id: opt('integer'),
  backup_code: opt('string'),
};

const TFA_METHOD = {
  'methods[].id': req('integer'),
  'methods[].user_id': req('integer'),
  'methods[].method': req('string'),
  'methods[].label': req('string'),
  'methods[].phone_number': req('string'),
  'methods[].is_primary': req('boolean'),
  'methods[].fail_count': req('integer'),
  'methods[].locked_until': req(['number', 'null']),
  'methods[].created_at': req('number'),
  'methods[].last_used': req('number'),
};

const FILTER = opt('object');

export const SPEC_ENDPOINTS: readonly SpecEndpoint[] = [
  {
    method: 'get',
    path: '/api/v0/team/roles/{id}',
    response: {
      id: req('integer'),
      name: req('string'),
      permissions: req('array'),
      'permissions[]': req('string'),
    },
  },
  { method: 'get', path: '/api/v0/users/current', response: USER },
  {
    method: 'post',
    path: '/api/v0/bundles',
    request: {
      verified: FILTER,
      rentable: FILTER,
      gpu_name: FILTER,
      num_gpus: FILTER,
      reliability: FILTER,
      gpu_ram: FILTER,
      direct_port_count: FILTER,
      order: opt('array'),
      type: opt('string'),
      limit: opt('integer'),
    },
    response: {
      offers: req('array'),
      'offers[].id': req('integer'),
      'offers[].num_gpus': req('integer'),
      'offers[].gpu_name': req('string'),
      'offers[].dph_total': req('number'),
    },
  },
  {
    method: 'put',
    path: '/api/v0/asks/{offer_id}',
    request: CREATION,
    response: { success: req('boolean'), new_contract: req('integer'), instance_api_key: req('string') },
  },
  {
    method: 'get',
    path: '/api/v0/instances',
    response: { instances_found: req('integer'), instances: req('array'), ...INSTANCE('instances[]') },
  },
  {
    method: 'get',
    path: '/api/v0/instances/{instance_id}',
    response: { instances: req('object'), ...INSTANCE('instances') },
  },
  {
    method: 'put',
    path: '/api/v0/instances/{instance_id}',
    request: { state: f('string') },
    response: { success: req('boolean') },
  },
  { method: 'delete', path: '/api/v0/instances/{instance_id}', response: { success: req('boolean') } },
  {
    method: 'put',
    path: '/api/v0/instances/request_logs/{id}',
    request: { tail: f('string'), filter: f('string'), daemon_logs: f('string') },
    response: { success: req('boolean'), result_url: req('string'), msg: req('string') },
  },
  {
    method: 'delete',
    path: '/api/v0/commands/rclone',
    request: { dst_id: f('integer') },
    response: { success: req('boolean'), msg: req('string') },
  },
  {
    method: 'put',
    path: '/api/v0/machines/{machine_id}/cancel_maint',
    response: {
      success: req('boolean'),
      ctime: req('number'),
      machine_id: req('integer'),
      msg: req('string'),
    },
  },
  {
    method: 'get',
    path: '/api/v0/template',
    query: { select_filters: opt('string') }, // a JSON object, sent as text in the query
    response: {
      templates: req('array'),
      'templates[].hash_id': req('string'),
      'templates[].name': req('string'),
    },
  },
  {
    method: 'post',
    path: '/api/v0/template',
    request: TEMPLATE_FIELDS,
    response: { template: req('object'), 'template.id': req('integer'), 'template.hash_id': req('string') },
  },
  {
    method: 'put',
    path: '/api/v0/template',
    request: { hash_id: req('string') },
    response: { template: req('object'), 'template.hash_id': req('string') },
  },
  {
    method: 'delete',
    path: '/api/v0/template',
    request: { template_id: f('integer') },
    response: { success: req('boolean') },
  },
  // API keys: "Paths and payloads of create API key and delete API key: not shown"; ours are these two.
  { method: 'post', path: '/api/v0/auth/apikeys' },
  { method: 'delete', path: '/api/v0/auth/apikeys/{id}' },
  {
    method: 'get',
    path: '/api/v0/tfa/status',
    response: {
      success: req('boolean'),
      tfa_enabled: req('boolean'),
      methods: req('array'),
      backup_codes_remaining: req('integer'),
      new_method_authorized: req('boolean'),
      ...TFA_METHOD,
    },
  },
  {
    method: 'post',
    path: '/api/v0/tfa',
    request: { ...TFA_PROOF, admin: opt('boolean') },
    response: {
      ...USER,
      session_key: opt('string'),
      backup_codes_remaining: opt('integer'),
      legacy_tfa_user: opt('boolean'),
    },
  },
  {
    method: 'delete',
    path: '/api/v0/tfa',
    request: { ...TFA_PROOF, target_id: opt('integer') },
    response: { msg: req('string'), remaining_methods: opt('integer') },
  },
  {
    method: 'post',
    path: '/api/v0/tfa/email',
    request: { secret: opt('string') },
    response: { success: req('boolean'), msg: req('string'), secret: req('string') },
  },
  {
    method: 'post',
    path: '/api/v0/tfa/sms',
    request: { phone_number: opt('string'), tfa_method_id: opt('integer'), secret: opt('string') },
    response: { msg: req('string'), secret: req('string') },
  },
  {
    method: 'post',
    path: '/api/v0/tfa/sms/resend',
    request: { phone_number: opt('string'), tfa_method_id: opt('integer'), secret: opt('string') },
    response: { msg: req('string'), secret: req('string') },
  },
  {
    method: 'post',
    path: '/api/v0/tfa/totp-setup',
    response: { secret: req('string'), provisioning_uri: req('string') },
  },
  {
    method: 'post',
    path: '/api/v0/tfa/authorize-new-method',
    request: { tfa_method: opt('string'), tfa_method_id: opt('integer'), backup_code: opt('string') },
    response: { success: req('boolean'), secret: opt('string'), msg: opt('string') },
  },
  {
    method: 'put',
    path: '/api/v0/tfa/authorize-new-method',
    request: { code: f('string'), secret: f('string') },
    response: { success: req('boolean'), msg: req('string') },
  },
  {
    method: 'post',
    path: '/api/v0/tfa/confirm-new',
    request: {
      tfa_method: req('string'),
      code: req('string'),
      secret: req('string'),
      phone_number: opt('string'),
      label: opt('string'),
    },
    response: {
      success: req('boolean'),
      msg: req('string'),
      backup_codes: opt('array'),
      'backup_codes[]': f('string'),
    },
  },
  {
    method: 'put',
    path: '/api/v0/tfa/update',
    request: {
      tfa_method_id: opt('integer'),
      tfa_method: opt('string'),
      label: opt('string'),
      is_primary: opt('boolean'),
    },
    response: { success: req('boolean'), msg: req('string'), method: req('object') },
  },
  {
    method: 'put',
    path: '/api/v0/tfa/regen-backup-codes',
    request: TFA_PROOF,
    response: { msg: req('string'), backup_codes: req('array'), 'backup_codes[]': req('string') },
  },
];
