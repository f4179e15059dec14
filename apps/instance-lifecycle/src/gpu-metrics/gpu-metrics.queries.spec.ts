import { ApiError } from '@rigmarket/contracts';
import { historyWindow, machineFilter } from './gpu-metrics.queries';
import { DEFAULT_GPU_METRICS } from './gpu-metrics.store';

const NOW = 1_800_000_000;

describe('GPU metrics query parameters', () => {
  it('reads the filters the CLI sends and refuses others with a 400', () => {
    expect(machineFilter({})).toEqual({ verified: 'all', hostingType: 'all', numGpus: 'all' });
    expect(machineFilter({ verified: 'yes', hosting_type: 'community', num_gpus: '8' })).toEqual({
      verified: 'yes',
      hostingType: 'community',
      numGpus: '8',
    });
    expect(() => machineFilter({ verified: 'true' })).toThrow(ApiError);
    expect(() => machineFilter({ num_gpus: ['1', '2'] })).toThrow(ApiError);
  });

  it('defaults to the last day in minutes, raising the step to the resolution and to 1,000 points at most', () => {
    expect(historyWindow({}, DEFAULT_GPU_METRICS, NOW)).toEqual({
      start: NOW - 86_400,
      end: NOW,
      resolution: 60,
      step: 120,
    });
    const hourly = { start: String(NOW - 3600), end: String(NOW), step: '3600' };
    expect(historyWindow(hourly, DEFAULT_GPU_METRICS, NOW)).toMatchObject({ resolution: 60, step: 3600 });
    expect(historyWindow({ ...hourly, step: '90' }, DEFAULT_GPU_METRICS, NOW).step).toBe(120);
    // beyond the minute aggregates' retention: hours
    const month = { start: String(NOW - 30 * 86_400), end: String(NOW) };
    expect(historyWindow(month, DEFAULT_GPU_METRICS, NOW)).toMatchObject({ resolution: 3600, step: 3600 });
  });

  it('refuses times that are not unix seconds, an empty range and one longer than a year', () => {
    for (const query of [
      { start: 'abc' },
      { end: '-5' },
      { start: String(NOW), end: String(NOW) },
      { start: '0', end: String(NOW) },
      { step: '1e12' },
    ])
      expect(() => historyWindow(query, DEFAULT_GPU_METRICS, NOW)).toThrow(ApiError);
  });
});
