/**
 * What a host sends, shared by the HTTP suites: the machine registration (a 4x RTX 4090 rig, as the host
 * agent reports it) and `vastai list machine`'s ask (docs/client-compat.md 2.9; every key present, unset ones null).
 */
export const HOST_HARDWARE = {
  gpu_name: 'RTX 4090',
  num_gpus: 4,
  gpu_ram: 24564,
  cuda_max_good: 12.4,
  driver_version: '550.54.15',
  compute_cap: 890,
  cpu_name: 'AMD EPYC 7543',
  cpu_cores: 32,
  cpu_ghz: 2.8,
  cpu_ram: 128000,
  disk_space: 2000,
  disk_bw: 3000,
  inet_up: 900,
  inet_down: 950,
  direct_port_count: 100,
  public_ipaddr: '203.0.113.7',
  geolocation: 'US',
  pci_gen: 4,
  pcie_bw: 24.5,
  hostname: 'rig-1',
};

export const LIST_MACHINE_ASK = {
  price_gpu: 0.5,
  price_disk: 0.15,
  price_inetu: 0.01,
  price_inetd: 0.01,
  price_min_bid: 0.3,
  min_chunk: 1,
  end_date: 4102444800.0,
  credit_discount_max: 0.4,
  duration: null,
  vol_size: 100,
  vol_price: 0.2,
};
