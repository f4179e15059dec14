import type { InstanceConfig } from '@rigmarket/contracts';

/**
 * An instance's config as a plain `create instance` leaves it (busybox, ssh_direct, 8 GB of disk, nothing
 * else set), with `overrides`: for the specs of the contexts that read an InstanceConfig.
 */
export function instanceConfig(overrides: Partial<InstanceConfig> = {}): InstanceConfig {
  return {
    image: 'busybox',
    runtype: 'ssh_direct',
    env: {},
    disk: 8,
    onstart: null,
    argsStr: null,
    args: null,
    useJupyterLab: false,
    jupyterDir: null,
    pythonUtf8: false,
    langUtf8: false,
    imageLogin: null,
    extraFilters: {},
    templateHashId: null,
    ...overrides,
  };
}
