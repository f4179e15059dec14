import { parseLaunchQuery } from './launch';

/** What `vastai launch instance -g RTX_4090 -n 2 -i IMG -r North_America` sends as q (docs/client-compat.md 2.2). */
const CLI_Q = {
  verified: { eq: true },
  external: { eq: false },
  rentable: { eq: true },
  rented: { eq: false },
  num_gpus: { eq: '2' },
  gpu_name: { eq: 'RTX 4090' },
  geolocation: { in: ['US', 'CA', 'MX'] },
  disk_space: { gte: '16.0' },
  order: [['score', 'desc']],
  type: 'on-demand',
  limit: 3,
  allocated_storage: 16.0,
};

describe('launch queries', () => {
  it('reads the GPU model, count, regions and how many offers to try from the CLI query', () => {
    expect(parseLaunchQuery(CLI_Q)).toEqual({
      gpuNames: ['RTX 4090'],
      numGpus: 2,
      geolocations: ['US', 'CA', 'MX'],
      limit: 3,
    });
    expect(parseLaunchQuery({ gpu_name: { in: ['RTX_3090', 'A100 SXM4'] } })).toEqual({
      gpuNames: ['RTX 3090', 'A100 SXM4'],
      numGpus: 1,
      geolocations: null,
      limit: 3,
    });
  });

  it('says what is missing or wrong', () => {
    expect(() => parseLaunchQuery(undefined)).toThrow('q must be an offer query object');
    expect(() => parseLaunchQuery({ num_gpus: { eq: 1 } })).toThrow('q.gpu_name is required');
    expect(() => parseLaunchQuery({ gpu_name: { eq: 'X' }, num_gpus: { eq: 'two' } })).toThrow(
      'q.num_gpus must be a positive integer',
    );
    expect(() => parseLaunchQuery({ gpu_name: { eq: 'X' }, limit: 0 })).toThrow('q.limit');
  });
});
