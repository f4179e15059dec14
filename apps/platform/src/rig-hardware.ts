/**
 * What a GPU rig reports of itself when it registers (POST /api/v0/machines/), besides its GPUs, name and
 * address: an AMD EPYC host with a CUDA 12.4 driver, 2 TB of disk and a gigabit line. The simulated hosts of
 * `npm start` (demo-hosts.ts) register it, and so do the test suites (testing/fixtures.ts, HOST_HARDWARE).
 */
export const EPYC_RIG = {
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
  pci_gen: 4,
  pcie_bw: 24.5,
};
