import type { InstanceBillingChanged } from '@rigmarket/contracts';
import { type SpecEvent, projectionSpec } from '@rigmarket/testing';
import { marketplaceContext } from '../../marketplace.context';
import { billingPeriodsProjection } from './projection';

const billing = (
  billingClass: InstanceBillingChanged['data']['billing'],
  minute: number,
): SpecEvent<InstanceBillingChanged> => ({
  streamId: 'instance-9',
  type: 'InstanceBillingChanged',
  data: {
    instanceId: 9,
    renter: 2,
    hostId: 3,
    machineId: 7,
    billing: billingClass,
    ratePerHourMicros: billingClass === 'compute' ? 2_000_000 : 10_000,
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
});
