import { projectionSpec } from '@rigmarket/testing';
import { marketplaceContext } from '../../marketplace.context';
import { AT, instanceCreated } from '../testing/events';
import { templateUsageProjection } from './projection';

describe('template_usage projection', () => {
  const spec = projectionSpec(marketplaceContext, templateUsageProjection);
  afterAll(() => spec.close());

  it('counts the instances created from each template; instances without one count for none', () =>
    spec
      .given([instanceCreated(9, 7, 1, 5), instanceCreated(10, 7, 1, null), instanceCreated(11, 7, 1, 6)])
      .when(instanceCreated(12, 7, 1, 5))
      .then(
        `SELECT template_id, count_created, recent_create_date FROM marketplace.template_usage ORDER BY 1`,
        [
          { template_id: 5, count_created: 2, recent_create_date: Date.parse(AT) / 1000 },
          { template_id: 6, count_created: 1, recent_create_date: Date.parse(AT) / 1000 },
        ],
      ));
});
