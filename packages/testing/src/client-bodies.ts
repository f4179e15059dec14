/**
 * Request bodies exactly as the real `vastai` CLI sends them (docs/client-compat.md), shared by the unit and
 * HTTP suites of the contexts that serve them.
 */

/** `vastai create instance <id> --image pytorch/pytorch --disk 40 --ssh --direct --env '-e TZ=UTC -p 8080:8080 -e A=b=c' --label mylabel --onstart-cmd 'echo hi'` (2.2). */
export const VASTAI_CREATE_INSTANCE = {
  client_id: 'me',
  image: 'pytorch/pytorch',
  env: { TZ: 'UTC', '-p 8080:8080': '1', A: 'b=c' },
  price: null,
  disk: 40.0,
  label: 'mylabel',
  extra: null,
  onstart: 'echo hi',
  image_login: null,
  python_utf8: false,
  lang_utf8: false,
  use_jupyter_lab: false,
  jupyter_dir: null,
  force: false,
  cancel_unavail: false,
  template_hash_id: null,
  user: null,
  runtype: 'ssh_direc ssh_proxy',
} as const;

/** `vastai search offers` with no query of its own: the CLI's default filters and order (2.1). */
export const VASTAI_SEARCH_OFFERS_DEFAULTS = {
  verified: { eq: true },
  external: { eq: false },
  rentable: { eq: true },
  order: [['score', 'desc']],
  type: 'on-demand',
  allocated_storage: 5.0,
} as const;
