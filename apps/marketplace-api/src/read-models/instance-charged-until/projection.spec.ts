import { projectionSpec } from '@rigmarket/testing';
import { marketplaceContext } from '../../marketplace.context';
import { AT } from '../testing/events';
import { instanceChargedUntilProjection } from './projection';

const charge = (instanceId: number, periodStart: string, periodEnd: string) => ({
  streamId: 'ledger-2',
  type: 'AccountCharged' as const,
  data: {
    userId: 2,
    instanceId,
    machineId: 7,
    kind: 'gpu' as const,
    amountMicros: 1,
    periodStart,
    periodEnd,
    at: AT,
    hostId: 3,
  },
});

describe('instance_charged_until projection (where the billing meter resumes)', () => {
  const spec = projectionSpec(marketplaceContext, instanceChargedUntilProjection);
  afterAll(() => spec.close());

  it("keeps each instance's latest charged moment, whatever order the charges arrive in", () =>
    spec
      .given([
        charge(9, '2026-01-01T00:00:00.000Z', '2026-01-01T00:01:00.000Z'),
        charge(9, '2026-01-01T00:01:00.000Z', '2026-01-01T00:02:00.000Z'),
        charge(11, '2026-01-01T00:00:00.000Z', '2026-01-01T00:05:00.000Z'),
      ])
      .when(charge(11, '2026-01-01T00:00:00.000Z', '2026-01-01T00:03:00.000Z'))
      .then(`SELECT instance_id, until FROM marketplace.instance_charged_until ORDER BY 1`, [
        { instance_id: 9, until: new Date('2026-01-01T00:02:00.000Z') },
        { instance_id: 11, until: new Date('2026-01-01T00:05:00.000Z') },
      ]));
});
