import type { MaintenanceEvent } from '@rigmarket/contracts';
import { deciderSpec } from '@rigmarket/testing';
import { MaintenanceErrors, maintenanceDecider } from './maintenance.decider';

const AT = '2026-05-01T12:00:00.000Z';
const NOW = Date.parse(AT) / 1000;
const spec = deciderSpec(maintenanceDecider);
const scheduled = (windowId: number, startTime: number, durationHours: number): MaintenanceEvent => ({
  type: 'MaintenanceScheduled',
  data: {
    machineId: 42,
    windowId,
    ownerId: 7,
    startTime,
    endTime: startTime + durationHours * 3600,
    durationHours,
    category: 'power',
    at: AT,
  },
});
const schedule = (windowId: number, startTime: number, durationHours: number) =>
  ({
    type: 'ScheduleMaintenance',
    machineId: 42,
    windowId,
    ownerId: 7,
    startTime,
    durationHours,
    category: 'power',
    at: AT,
  }) as const;

describe('maintenance windows of a machine', () => {
  describe('When none is scheduled', () => {
    it('schedules a window: end = start + duration hours', () =>
      spec
        .given([])
        .when(schedule(1, NOW + 3600, 2))
        .then([scheduled(1, NOW + 3600, 2)]));
    it('accepts a window that has started but not ended', () =>
      spec
        .given([])
        .when(schedule(1, NOW - 600, 1))
        .then([scheduled(1, NOW - 600, 1)]));
    it('refuses a window that is already over', () =>
      spec
        .given([])
        .when(schedule(1, NOW - 7200, 1))
        .thenThrows('bad_request'));
    it('refuses a zero, negative or over-a-week duration', () => {
      spec
        .given([])
        .when(schedule(1, NOW + 60, 0))
        .thenThrows('bad_request');
      spec
        .given([])
        .when(schedule(1, NOW + 60, -2))
        .thenThrows('bad_request');
      spec
        .given([])
        .when(schedule(1, NOW + 60, 24 * 7 + 1))
        .thenThrows('bad_request');
    });
    it('cancel deletes nothing', () =>
      spec.given([]).when({ type: 'CancelMaintenance', machineId: 42, at: AT }).thenNothingHappened());
  });

  describe('When windows are scheduled', () => {
    const given = [scheduled(1, NOW + 3600, 2), scheduled(2, NOW + 86400, 1)];
    it('refuses an overlapping window', () =>
      spec
        .given(given)
        .when(schedule(3, NOW + 7000, 1))
        .thenThrows(MaintenanceErrors.overlapping));
    it('accepts a window that starts when another ends (half-open intervals)', () =>
      spec
        .given(given)
        .when(schedule(3, NOW + 3600 + 7200, 1))
        .then([scheduled(3, NOW + 3600 + 7200, 1)]));
    it('cancel deletes every window that has not ended, in one event', () =>
      spec
        .given(given)
        .when({ type: 'CancelMaintenance', machineId: 42, at: AT })
        .then([{ type: 'MaintenanceCanceled', data: { machineId: 42, windowIds: [1, 2], at: AT } }]));
    it('cancel leaves windows that are over alone', () =>
      spec
        .given([scheduled(1, NOW - 10 * 3600, 1), scheduled(2, NOW + 60, 1)])
        .when({ type: 'CancelMaintenance', machineId: 42, at: AT })
        .then([{ type: 'MaintenanceCanceled', data: { machineId: 42, windowIds: [2], at: AT } }]));
    it('after a cancel there is nothing left to cancel', () =>
      spec
        .given([
          ...given,
          { type: 'MaintenanceCanceled', data: { machineId: 42, windowIds: [1, 2], at: AT } },
        ])
        .when({ type: 'CancelMaintenance', machineId: 42, at: AT })
        .thenNothingHappened());
  });
});
