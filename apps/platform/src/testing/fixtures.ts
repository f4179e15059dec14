import { EPYC_RIG } from '../rig-hardware';

/**
 * What a host sends, shared by the HTTP suites: the machine registration (EPYC_RIG with 4 RTX 4090s, as the host
 * agent reports it) and `vastai list machine`'s ask (docs/client-compat.md 2.9; every key present, unset ones null).
 */
export const HOST_HARDWARE = {
  ...EPYC_RIG,
  gpu_name: 'RTX 4090',
  num_gpus: 4,
  gpu_ram: 24564,
  public_ipaddr: '203.0.113.7',
  geolocation: 'US',
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
