import { projectionSpec } from '@rigmarket/testing';
import { instanceLifecycleContext } from '../../instance-lifecycle.context';
import { envVarsProjection } from './projection';

const AT = '2026-05-01T12:00:00.000Z';

describe('env_vars projection', () => {
  const spec = projectionSpec(instanceLifecycleContext, envVarsProjection);
  afterAll(() => spec.close());

  it("keeps each account's variables with their latest sealed value; a deleted one is gone", () =>
    spec
      .given([
        {
          streamId: 'env_vars-2',
          type: 'EnvVarSet',
          data: { userId: 2, name: 'A', valueSealed: 'v1:a1', created: true, at: AT },
        },
        {
          streamId: 'env_vars-2',
          type: 'EnvVarSet',
          data: { userId: 2, name: 'B', valueSealed: 'v1:b1', created: true, at: AT },
        },
        {
          streamId: 'env_vars-3',
          type: 'EnvVarSet',
          data: { userId: 3, name: 'A', valueSealed: 'v1:other', created: true, at: AT },
        },
        {
          streamId: 'env_vars-2',
          type: 'EnvVarSet',
          data: { userId: 2, name: 'A', valueSealed: 'v1:a2', created: false, at: AT },
        },
      ])
      .when({ streamId: 'env_vars-2', type: 'EnvVarDeleted', data: { userId: 2, name: 'B', at: AT } })
      .then(`SELECT user_id, name, value_sealed FROM instance_lifecycle.env_vars ORDER BY user_id, name`, [
        { user_id: 2, name: 'A', value_sealed: 'v1:a2' },
        { user_id: 3, name: 'A', value_sealed: 'v1:other' },
      ]));
});
