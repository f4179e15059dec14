import type { InstanceBillingChanged } from '@rigmarket/contracts';
import { type SpecEvent, projectionSpec } from '@rigmarket/testing';
import { marketplaceContext } from '../../marketplace.context';
import { billingPeriodsProjection } from './projection';

const billing = (
  billingClass: InstanceBillingChanged['data']['billing'],
  minute: number,
  instanceId = 9,
  ratePerHourMicros = billingClass === 'compute' ? 2_000_000 : 10_000,
): SpecEvent<InstanceBillingChanged> => ({
  streamId: `instance-${instanceId}`,
  type: 'InstanceBillingChanged',
  data: {
    instanceId,
    renter: 2,
    hostId: 3,
    machineId: 7,
    billing: billingClass,
    ratePerHourMicros,
    at: `2026-05-01T12:0${minute}:00.000Z`,
  } as InstanceBillingChanged['data'],
});

describe('billing_periods projection', () => {
  const spec = projectionSpec(marketplaceContext, billingPeriodsProjection);
  afterAll(() => spec.close());

  it('opens a period per billing class and closes it at the next change', () =>
    spec
      .given([billing('compute', 0), billing('storage', 5)])
      .when(billing('none', 9))
      .then(
        `SELECT kind, rate_per_hour_micros::text AS rate_per_hour_micros, started_at::text AS started, ended_at::text AS ended FROM marketplace.billing_periods ORDER BY started_at`,
        [
          {
            kind: 'gpu',
            rate_per_hour_micros: '2000000',
            started: '2026-05-01 12:00:00+00',
            ended: '2026-05-01 12:05:00+00',
          },
          {
            kind: 'storage',
            rate_per_hour_micros: '10000',
            started: '2026-05-01 12:05:00+00',
            ended: '2026-05-01 12:09:00+00',
          },
        ],
      ));

  // The when events are also applied as one batch after the given ones (the spec helper), and all of them as
  // one: several instances, and one instance's changes in turn (ended then restarted, reopened at the instant
  // it ended, restarted at its start's instant with another rate, an end with no open period).
  it('keeps each instance its periods in order when many instances change in one delivery', () =>
    spec
      .given([billing('compute', 0, 9), billing('compute', 0, 10)])
      .when(
        billing('storage', 1, 9),
        billing('none', 2, 10),
        billing('compute', 2, 11),
        billing('none', 3, 9),
        billing('compute', 4, 10),
        billing('none', 2, 11),
        billing('compute', 2, 11, 3_000_000),
        billing('none', 5, 12),
        billing('compute', 4, 10, 4_000_000),
      )
      .then(
        `SELECT instance_id, kind, rate_per_hour_micros::int AS rate, to_char(started_at, 'MI') AS started, to_char(ended_at, 'MI') AS ended
           FROM marketplace.billing_periods ORDER BY instance_id, started_at`,
        [
          { instance_id: 9, kind: 'gpu', rate: 2_000_000, started: '00', ended: '01' },
          { instance_id: 9, kind: 'storage', rate: 10_000, started: '01', ended: '03' },
          { instance_id: 10, kind: 'gpu', rate: 2_000_000, started: '00', ended: '02' },
          { instance_id: 10, kind: 'gpu', rate: 4_000_000, started: '04', ended: null },
          { instance_id: 11, kind: 'gpu', rate: 3_000_000, started: '02', ended: null },
        ],
      ));
});
