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
 * The marketplace context's wire contract for the OpenAPI document (docs/api.md "The OpenAPI document"):
 * offers, machines, templates, volumes and the ledger, as the routes take and answer them.
 */

const numOrText: JsonSchema = { type: ['number', 'string'] };
const optionalNumber: JsonSchema = { type: ['number', 'string', 'null'] };

export const OFFER = namedSchema(
  'Offer',
  objectOf(
    {
      id: int,
      machine_id: int,
      host_id: int,
      num_gpus: int,
      gpu_name: str,
      gpu_ram: num,
      dph_total: num,
      dph_base: num,
      min_bid: num,
      storage_cost: num,
      disk_space: num,
      reliability: num,
      verified: bool,
      verification: str,
      rentable: bool,
      rented: bool,
      direct_port_count: int,
      geolocation: nullable(str),
      start_date: nullable(num),
      end_date: nullable(num),
      is_bid: bool,
    },
    ['id', 'machine_id', 'num_gpus', 'gpu_name', 'dph_total'],
  ),
);

export const MACHINE = namedSchema(
  'Machine',
  objectOf(
    {
      id: int,
      machine_id: int,
      owner_id: int,
      num_gpus: int,
      gpu_name: str,
      listed: bool,
      hostname: nullable(str),
      gpu_ram: num,
      verification: str,
      reliability2: num,
      listed_gpu_cost: nullable(num),
      min_bid_price: nullable(num),
      end_date: nullable(num),
    },
    ['id', 'machine_id', 'num_gpus', 'gpu_name', 'listed', 'verification'],
  ),
);

export const TEMPLATE = namedSchema(
  'Template',
  objectOf(
    {
      id: int,
      hash_id: str,
      name: str,
      image: str,
      tag: nullable(str),
      desc: nullable(str),
      readme: nullable(str),
      env: nullable(str),
      onstart: nullable(str),
      runtype: nullable(str),
      args_str: nullable(str),
      ssh_direct: bool,
      use_ssh: bool,
      jup_direct: bool,
      jupyter_dir: nullable(str),
      use_jupyter_lab: bool,
      docker_login_repo: nullable(str),
      docker_login_user: nullable(str),
      docker_login_pass: nullable(str),
      href: nullable(str),
      repo: nullable(str),
      extra_filters: nullable(anyObject),
      recommended_disk_space: nullable(num),
      private: bool,
      volume_info: anyValue,
      creator_id: int,
      created_at: num,
      count_created: int,
      recent_create_date: nullable(num),
      recommended: bool,
      default_tag: nullable(str),
    },
    ['id', 'hash_id', 'name', 'image'],
  ),
);

export const VOLUME = namedSchema(
  'Volume',
  objectOf(
    {
      id: int,
      name: nullable(str),
      label: nullable(str),
      size: num,
      disk_space: num,
      machine_id: int,
      start_date: num,
      storage_cost: num,
      status: str,
      type: str,
      host_id: nullable(int),
      instances: arrayOf(int),
      cloned_from: nullable(int),
      status_msg: nullable(str),
    },
    ['id', 'size', 'machine_id', 'status'],
  ),
);

export const VOLUME_OFFER = namedSchema(
  'VolumeOffer',
  objectOf({ id: int, machine_id: int, host_id: int, disk_space: num }, ['id', 'machine_id', 'disk_space']),
);

export const LEDGER_ENTRY = namedSchema(
  'LedgerEntry',
  objectOf({
    type: str,
    amount: num,
    instance_id: nullable(int),
    machine_id: nullable(int),
    description: nullable(str),
    start: nullable(num),
    end: nullable(num),
    timestamp: num,
  }),
);

/** One field's condition: `{<op>: value}` (ops eq, neq, lt, lte, gt, gte, in, notin; `in`/`notin` take a list). */
const FILTER = namedSchema(
  'OfferFilter',
  objectOf(
    {
      eq: anyValue,
      neq: anyValue,
      lt: numOrText,
      lte: numOrText,
      gt: numOrText,
      gte: numOrText,
      in: arrayOf(anyValue),
      notin: arrayOf(anyValue),
    },
    [],
  ),
);

/** An offer filter: `{<field>: {<op>: value}}` plus order, type and limit (spec "Search offers"). */
const OFFER_SEARCH: JsonSchema = {
  type: 'object',
  description:
    'Filters {"<field>": {"<op>": value}} (ops eq, neq, lt, lte, gt, gte, in, notin), order, type, limit',
  properties: {
    verified: FILTER,
    rentable: FILTER,
    gpu_name: FILTER,
    num_gpus: FILTER,
    reliability: FILTER,
    gpu_ram: FILTER,
    direct_port_count: FILTER,
    order: arrayOf(arrayOf(str)),
    type: str,
    limit: int,
  },
};

const TEMPLATE_FIELDS: Record<string, JsonSchema> = {
  name: str,
  image: str,
  tag: str,
  desc: str,
  readme: str,
  env: { type: ['string', 'object'] },
  onstart: str,
  runtype: str,
  args_str: str,
  ssh_direct: bool,
  use_ssh: bool,
  jup_direct: bool,
  jupyter_dir: nullable(str),
  use_jupyter_lab: bool,
  docker_login_repo: str,
  docker_login_user: str,
  docker_login_pass: str,
  href: str,
  repo: str,
  extra_filters: anyObject,
  recommended_disk_space: num,
  private: bool,
  volume_info: nullable(anyObject),
};

export const BODIES = {
  offerSearch: OFFER_SEARCH,
  registerMachine: objectOf(
    {
      gpu_name: str,
      num_gpus: int,
      gpu_ram: num,
      cuda_max_good: num,
      driver_version: str,
      compute_cap: num,
      cpu_name: str,
      cpu_cores: int,
      cpu_ghz: num,
      cpu_ram: num,
      disk_space: num,
      disk_bw: num,
      disk_name: str,
      inet_up: num,
      inet_down: num,
      direct_port_count: int,
      public_ipaddr: str,
      geolocation: str,
      pci_gen: num,
      pcie_bw: num,
      hostname: str,
      hosting_type: { type: 'integer', enum: [0, 1] },
      vms_enabled: bool,
    },
    [
      'gpu_name',
      'num_gpus',
      'gpu_ram',
      'cuda_max_good',
      'driver_version',
      'cpu_cores',
      'cpu_ram',
      'disk_space',
      'inet_up',
      'inet_down',
    ],
  ),
  createAsks: objectOf(
    {
      machine: numOrText,
      price_gpu: numOrText,
      price_disk: optionalNumber,
      price_inetu: optionalNumber,
      price_inetd: optionalNumber,
      price_min_bid: optionalNumber,
      min_chunk: optionalNumber,
      end_date: optionalNumber,
      credit_discount_max: optionalNumber,
      duration: anyValue,
      vol_size: optionalNumber,
      vol_price: optionalNumber,
    },
    ['machine', 'price_gpu'],
  ),
  minBid: objectOf({ price: numOrText }),
  defrag: objectOf({ machine_ids: arrayOf(numOrText) }, ['machine_ids']),
  verification: objectOf({
    verification: { type: 'string', enum: ['unverified', 'verified', 'deverified'] },
  }),
  createTemplate: objectOf(TEMPLATE_FIELDS, [
    'name',
    'image',
    'docker_login_repo',
    'docker_login_user',
    'docker_login_pass',
  ]),
  editTemplate: objectOf({ hash_id: str, id: int, ...TEMPLATE_FIELDS }, ['hash_id']),
  deleteTemplate: objectOf({ template_id: int, hash_id: str }, []),
  listVolume: objectOf(
    {
      machine: { anyOf: [numOrText, arrayOf(numOrText)] },
      size: numOrText,
      price_disk: numOrText,
      end_date: optionalNumber,
    },
    ['machine', 'size'],
  ),
  unlistVolume: objectOf({ id: numOrText }),
  volumeSearch: { type: 'object', properties: { q: anyObject } },
  createVolume: objectOf({ id: numOrText, size: numOrText, name: str }, ['id', 'size']),
  deleteVolume: objectOf({ id: numOrText }, []),
  cloneVolume: objectOf(
    { src_id: numOrText, dst_id: numOrText, size: numOrText, disable_compression: bool },
    ['src_id', 'dst_id'],
  ),
  credit: objectOf({ user_id: int, amount: num, note: str }, ['user_id', 'amount']),
  transferCredit: objectOf(
    { sender: { const: 'me' }, recipient: { type: ['string', 'integer'] }, amount: numOrText },
    ['recipient', 'amount'],
  ),
  prepay: objectOf({ amount: numOrText }, ['amount']),
} as const;

/** One row of `show invoices-v1` (billing-history.ts): an invoice or an instance charge. */
export const BILLING_ITEM = namedSchema(
  'BillingItem',
  objectOf({
    id: int,
    type: str,
    source: str,
    amount: num,
    start: nullable(num),
    end: nullable(num),
    description: str,
    metadata: { type: 'object' },
    items: arrayOf({}),
  }),
);

/** One row of `search invoices`. */
export const INVOICE = namedSchema(
  'Invoice',
  objectOf({
    id: int,
    user_id: int,
    when: num,
    paid_on: num,
    payment_expected: num,
    amount: num,
    amount_cents: int,
    is_credit: bool,
    is_delayed: bool,
    service: str,
    description: nullable(str),
    failed: bool,
    refunded: bool,
  }),
);

const HISTORY_PAGE = {
  results: arrayOf(BILLING_ITEM),
  count: int,
  total: int,
  next_token: nullable(str),
};

export const ANSWERS = {
  offers: objectOf({ offers: arrayOf(OFFER) }),
  volumeOffers: objectOf({ offers: arrayOf(VOLUME_OFFER) }),
  msg: succeeded({ msg: str }),
  machineRegistered: succeeded({ machine_id: int, id: int }),
  machines: succeeded({ machines: arrayOf(MACHINE) }),
  machine: arrayOf(MACHINE),
  listed: succeeded({ extended: bool, msg: str }),
  verification: succeeded({ verification: str }),
  heartbeat: succeeded({ reliability: num }),
  defragged: succeeded({
    msg: str,
    machines: arrayOf(objectOf({ machine_id: int, num_gpus: int, gpus_free: int, offers: arrayOf(int) })),
  }),
  gpuNames: succeeded({ gpu_names: arrayOf(str) }),
  templates: succeeded({ templates: arrayOf(TEMPLATE) }),
  template: succeeded({ msg: str, template: TEMPLATE }),
  volumeCreated: succeeded({ volume_id: int, msg: str }),
  volumes: succeeded({ volumes: arrayOf(VOLUME) }),
  granted: succeeded({ user_id: int, credit: num }),
  credit: succeeded({ credit: num }),
  invoices: succeeded({ invoices: arrayOf(LEDGER_ENTRY), current: objectOf({ credit: num, charges: num }) }),
  charges: succeeded({ charges: arrayOf(LEDGER_ENTRY), ...HISTORY_PAGE }),
  history: succeeded(HISTORY_PAGE),
  searchInvoices: succeeded({ invoices: arrayOf(INVOICE) }),
  transferred: succeeded({ msg: str, recipient_id: int, amount: num, credit: num }),
  prepaid: succeeded({
    msg: str,
    instance_id: int,
    amount: num,
    deposit: num,
    credit: num,
    timescale: num,
    discount_rate: num,
  }),
  deposit: succeeded({
    instance_id: int,
    deposit: num,
    prepaid: num,
    drawn: num,
    refunded: num,
    closed: bool,
    timescale: num,
    discount_rate: num,
  }),
  earnings: succeeded({
    earnings: arrayOf(LEDGER_ENTRY),
    machines: { type: 'object', additionalProperties: num },
  }),
} as const;

export const QUERIES = {
  templateSearch: { select_filters: { type: 'string', description: 'JSON {"<field>": {"<op>": value}}' } },
  templateDelete: { template_id: int, hash_id: str },
  volumes: { type: str },
  volumeDelete: { id: int },
  earnings: { machine_id: int, machid: int, sday: num, eday: num },
  history: {
    select_filters: {
      type: 'string',
      description: 'JSON {"day"|"when": {"gte": epoch, "lte": epoch}, "type"|"service": {"in": [...]}}',
    },
    latest_first: bool,
    limit: int,
    after_token: str,
  },
  searchInvoices: {
    select_filters: { type: 'string', description: 'JSON {"<invoice field>": {"<op>": value}}' },
    select_cols: str,
  },
} as const;
