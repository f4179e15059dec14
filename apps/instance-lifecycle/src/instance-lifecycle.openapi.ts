import {
  type JsonSchema,
  anyObject,
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
 * The instance-lifecycle context's wire contract for the OpenAPI document (docs/api.md "The OpenAPI
 * document"): the instance creation fields (spec "Instance creation fields"), instances, logs.
 */

export const INSTANCE = namedSchema(
  'Instance',
  objectOf(
    {
      id: int,
      actual_status: nullable(str),
      intended_status: str,
      cur_state: str,
      next_state: str,
      label: nullable(str),
      image: nullable(str),
      ssh_host: nullable(str),
      ssh_port: nullable(int),
      machine_id: int,
      num_gpus: int,
      gpu_name: str,
      dph_total: num,
      is_bid: bool,
      disk_space: num,
      vm: bool,
      status_msg: nullable(str),
      snapshot_status: nullable(str),
      snapshot_msg: nullable(str),
      start_date: nullable(num),
      end_date: nullable(num),
      ports: anyObject,
      actions: arrayOf(str),
    },
    ['id', 'actual_status', 'label', 'ssh_host', 'ssh_port', 'machine_id', 'num_gpus', 'gpu_name'],
  ),
);

const VOLUME_INFO = objectOf({ create_new: bool, volume_id: int, size: num, mount_path: str }, [
  'volume_id',
  'mount_path',
]);

export const CREATION_FIELDS: Record<string, JsonSchema> = {
  image: str,
  template_hash_id: str,
  label: str,
  disk: num,
  runtype: {
    type: 'string',
    enum: ['ssh_direct', 'ssh_proxy', 'ssh', 'jupyter_direct', 'jupyter_proxy', 'jupyter', 'args'],
  },
  target_state: { type: 'string', enum: ['running', 'stopped'] },
  price: num,
  env: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
  onstart: { type: 'string', maxLength: 4048 },
  args_str: str,
  use_jupyter_lab: bool,
  jupyter_dir: str,
  python_utf8: bool,
  lang_utf8: bool,
  image_login: str,
  cancel_unavail: bool,
  vm: bool,
  volume_info: VOLUME_INFO,
};

export const CREATE_INSTANCE = namedSchema('InstanceCreation', objectOf(CREATION_FIELDS, []));

const idList: JsonSchema = arrayOf({ type: ['integer', 'string'] });
const RESULTS = arrayOf(objectOf({ id: int, success: bool, error: str, msg: str }, ['id', 'success']));

export const BODIES = {
  create: CREATE_INSTANCE,
  bulkCreate: { allOf: [CREATE_INSTANCE, objectOf({ ids: idList })] },
  launch: { allOf: [CREATE_INSTANCE, objectOf({ q: anyObject }, [])] },
  update: objectOf({ state: { type: 'string', enum: ['running', 'stopped'] }, label: str }, []),
  bulkUpdate: objectOf({ ids: idList, state: { type: 'string', enum: ['running', 'stopped'] }, label: str }, [
    'ids',
  ]),
  bulkDestroy: objectOf({ instance_ids: idList }),
  bid: objectOf({ price: { type: ['number', 'string'] } }),
  sshKey: objectOf({ ssh_key: str }),
  logs: objectOf(
    { tail: { type: ['string', 'integer'] }, filter: str, daemon_logs: { type: ['string', 'boolean'] } },
    [],
  ),
  envVar: objectOf({ key: str, value: str }, ['key']),
  cloudConnection: objectOf(
    {
      name: str,
      cloud_type: { type: 'string', enum: ['s3'] },
      endpoint: str,
      region: str,
      access_key_id: str,
      secret_access_key: str,
    },
    ['name', 'endpoint', 'access_key_id', 'secret_access_key'],
  ),
  execute: objectOf({ command: str }, ['command']),
  priceIncrease: objectOf({ pending_price_increase_id: int }, ['pending_price_increase_id']),
  snapshot: objectOf(
    {
      id: { type: ['string', 'integer'] },
      container_registry: str,
      personal_repo: str,
      docker_login_user: nullable(str),
      docker_login_pass: nullable(str),
      pause: { type: ['string', 'boolean'] },
    },
    ['personal_repo'],
  ),
  defaultJob: objectOf(
    {
      machine: { type: ['integer', 'string'] },
      price_gpu: nullable(num),
      price_inetu: nullable(num),
      price_inetd: nullable(num),
      image: str,
      args: nullable(arrayOf(str)),
    },
    ['machine', 'image'],
  ),
  scheduleJob: objectOf(
    {
      start_time: num,
      end_time: num,
      api_endpoint: str,
      request_method: str,
      request_body: anyObject,
      day_of_the_week: nullable(int),
      hour_of_the_day: nullable(int),
      frequency: { type: 'string', enum: ['HOURLY', 'DAILY', 'WEEKLY'] },
      instance_id: int,
    },
    ['api_endpoint', 'request_method', 'frequency', 'instance_id'],
  ),
  updateTemplate: objectOf(
    {
      id: int,
      template_id: int,
      template_hash_id: str,
      image: str,
      args: str,
      env: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
      onstart: str,
    },
    [],
  ),
} as const;

const GPU_FILTERS = {
  verified: { type: 'string', enum: ['yes', 'no', 'all'] },
  hosting_type: { type: 'string', enum: ['secure_cloud', 'community', 'all'] },
  num_gpus: { type: 'string', enum: ['1', '2', '4', '8', 'other', 'all'] },
} as const;

export const QUERIES = {
  benchmarks: {
    select_filters: { type: 'string', description: 'JSON {"<field>": {"<op>": value}}' },
    order_by: { type: 'string', description: 'JSON [{"col", "dir"}]' },
    limit: int,
    after_token: str,
  },
  gpuMetrics: GPU_FILTERS,
  gpuMetricsHistory: {
    ...GPU_FILTERS,
    gpu_name: { type: 'string', description: 'a GPU model, a comma-separated list, or "all"' },
    start: { type: 'string', description: 'unix seconds (default: end - 1 day)' },
    end: { type: 'string', description: 'unix seconds (default: now)' },
    step: { type: 'string', description: 'seconds between points (raised to the kept resolution)' },
  },
} as const;

const NUMBER_OR_NULL = nullable(num);
const GPU_METRICS_ROW = objectOf(
  {
    gpu_name: str,
    total: int,
    available: int,
    unavailable: int,
    usage: { ...NUMBER_OR_NULL, description: 'mean GPU utilisation (percent) of the latest samples' },
    rented_verified: int,
    avail_verified: int,
    rented_unverified: int,
    avail_unverified: int,
    price_p10: NUMBER_OR_NULL,
    price_median: NUMBER_OR_NULL,
    price_p90: NUMBER_OR_NULL,
    sampled_gpus: int,
    memory_used: NUMBER_OR_NULL,
    memory_total: NUMBER_OR_NULL,
    temperature: NUMBER_OR_NULL,
    power: NUMBER_OR_NULL,
    devices: arrayOf(anyObject),
  },
  ['gpu_name', 'total', 'available', 'usage', 'sampled_gpus', 'devices'],
);

export const ANSWERS = {
  benchmarks: succeeded({
    benchmarks_found: int,
    benchmarks: arrayOf(
      objectOf(
        {
          id: int,
          machine_id: int,
          gpu_name: str,
          num_gpus: int,
          type: str,
          value: num,
          dph_base: nullable(num),
          last_update: num,
        },
        ['id', 'machine_id', 'type', 'value', 'last_update'],
      ),
    ),
    next_token: nullable(str),
  }),
  gpuMetricsCurrent: succeeded({ gpus: arrayOf(GPU_METRICS_ROW), needs_machine: bool }, ['gpus']),
  gpuMetricsHistory: succeeded(
    {
      gpus: {
        type: 'object',
        additionalProperties: objectOf({
          supply_demand: anyObject,
          pricing: anyObject,
          telemetry: anyObject,
          stats: anyObject,
        }),
      },
      needs_machine: bool,
    },
    ['gpus'],
  ),
  gpuLocations: succeeded({ locations: arrayOf(anyObject), needs_machine: bool }, ['locations']),
  created: succeeded({ new_contract: int, instance_api_key: str }),
  launched: succeeded({ new_contract: int, instance_api_key: str, ask_id: int }),
  bulkCreated: objectOf({
    success: bool,
    new_contracts: arrayOf(int),
    results: arrayOf(
      objectOf(
        { ask_id: int, success: bool, new_contract: int, instance_api_key: str, error: str, msg: str },
        ['ask_id', 'success'],
      ),
    ),
  }),
  list: succeeded({ instances_found: int, instances: arrayOf(INSTANCE) }),
  page: succeeded(
    {
      instances_found: int,
      instances: arrayOf(INSTANCE),
      next_token: nullable(str),
      total_instances: int,
      label_counts: anyObject,
    },
    ['instances_found', 'instances'],
  ),
  filters: succeeded({ filters: arrayOf(anyObject) }),
  one: objectOf({
    instances: { ...nullable(INSTANCE), description: 'null when the caller has no such instance' },
  }),
  results: objectOf({ success: bool, results: RESULTS }),
  msg: succeeded({ msg: str }),
  sshKeyAttached: succeeded({ msg: str, key: objectOf({ id: int, instance_id: int, ssh_key: str }) }),
  logs: succeeded({ result_url: str, msg: str }),
  logText: { type: 'string' },
  execute: succeeded({ result_url: str, writeable_path: str, msg: str }),
  any: anyValue,
  envVars: succeeded({ secrets: { type: 'object', additionalProperties: str } }),
  envVarChanged: succeeded({ msg: str }),
  cloudConnections: arrayOf(
    objectOf({
      id: int,
      name: str,
      cloud_type: str,
      endpoint: str,
      region: str,
      access_key_id: { type: 'string', description: 'masked: the last 4 characters only' },
      secret_access_key: { type: 'string', description: 'always masked' },
      created_at: num,
    }),
  ),
  scheduledJobs: arrayOf(
    objectOf({
      id: int,
      instance_id: int,
      api_endpoint: str,
      request_method: str,
      request_body: anyObject,
      start_time: num,
      end_time: num,
      day_of_the_week: nullable(int),
      hour_of_the_day: nullable(int),
      min_of_the_hour: int,
      frequency: str,
      next_run_time: nullable(num),
      last_run_time: nullable(num),
      last_result: nullable(objectOf({ ok: bool, msg: str })),
      runs: int,
    }),
  ),
  scheduledJob: succeeded({ scheduled_job_id: int, msg: str }),
  cloudConnectionAdded: succeeded({ id: int, msg: str }),
  snapshot: succeeded({ msg: str, snapshot_id: int, image: str }),
  pendingPriceIncreases: succeeded({
    count: int,
    truncated: bool,
    pending_price_increases: arrayOf(anyObject),
  }),
  defaultJobSet: succeeded({ msg: str, instance_id: nullable(int) }),
  cleanedUp: succeeded({ msg: str, instances_removed: arrayOf(int), disk_freed_gb: num }),
  reports: succeeded({
    reports: arrayOf(objectOf({ problem: str, message: nullable(str), created: num, instance_id: int })),
  }),
  instanceBackups: succeeded({
    backups: arrayOf(
      objectOf({
        id: int,
        contract_id: int,
        type: { type: 'string', enum: ['instance', 'volume'] },
        machine_id: int,
        status: { type: 'string', enum: ['pending', 'success', 'error'] },
        created_at: int,
        info: str,
      }),
    ),
  }),
  instanceBackupFiles: succeeded(
    {
      authorization_token: nullable(str),
      expires_in_sec: int,
      truncated: bool,
      files: arrayOf(objectOf({ name: str, size: int, url: str })),
      msg: str,
    },
    ['authorization_token', 'expires_in_sec', 'truncated', 'files'],
  ),
  backupObject: { type: 'string', format: 'binary' },
} as const;

/** Refusals of the commands on one instance. */
export const INSTANCE_ERRORS = {
  400: ['invalid_id', 'instance_cannot_start', 'instance_not_running'],
  404: ['no_such_instance'],
  409: ['invalid_transition', 'instance_waiting_for_volume'],
} as const;

/** Refusals of a rent. */
export const RENT_ERRORS = {
  400: ['bad_request', 'invalid_size', 'insufficient_space'],
  404: ['no_such_template', 'no_such_volume'],
  409: ['offer_unavailable', 'provisioning_ended', 'volume_mismatch'],
} as const;
