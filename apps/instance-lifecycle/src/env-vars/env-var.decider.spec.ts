import { deciderSpec } from '@rigmarket/testing';
import { EnvVarBox } from './env-var-box';
import { ENV_VAR_LIMITS, EnvVarErrors, type EnvVarEvent, envVarsDecider } from './env-var.decider';

const AT = '2026-05-01T12:00:00.000Z';
const set = (name: string, valueSealed = 'v1:sealed', created = true): EnvVarEvent => ({
  type: 'EnvVarSet',
  data: { userId: 2, name, valueSealed, created, at: AT },
});
const spec = deciderSpec(envVarsDecider);

describe("an account's environment variables", () => {
  it('creates a variable once; a second create of the name is refused', () => {
    spec
      .given([])
      .when({ type: 'CreateEnvVar', at: AT, userId: 2, name: 'HF_TOKEN', valueSealed: 'v1:sealed' })
      .then([set('HF_TOKEN')]);
    spec
      .given([set('HF_TOKEN')])
      .when({ type: 'CreateEnvVar', at: AT, userId: 2, name: 'HF_TOKEN', valueSealed: 'v1:other' })
      .thenThrows(EnvVarErrors.exists);
  });

  it('updates and deletes only a variable that exists', () => {
    spec
      .given([set('A')])
      .when({ type: 'UpdateEnvVar', at: AT, userId: 2, name: 'A', valueSealed: 'v1:new' })
      .then([set('A', 'v1:new', false)]);
    spec
      .given([set('A')])
      .when({ type: 'UpdateEnvVar', at: AT, userId: 2, name: 'B', valueSealed: 'v1:new' })
      .thenThrows(EnvVarErrors.notFound);
    spec
      .given([set('A')])
      .when({ type: 'DeleteEnvVar', at: AT, userId: 2, name: 'A' })
      .then([{ type: 'EnvVarDeleted', data: { userId: 2, name: 'A', at: AT } }]);
    spec
      .given([set('A'), { type: 'EnvVarDeleted', data: { userId: 2, name: 'A', at: AT } }])
      .when({ type: 'DeleteEnvVar', at: AT, userId: 2, name: 'A' })
      .thenThrows(EnvVarErrors.notFound);
  });

  it(`keeps at most ${ENV_VAR_LIMITS.perAccount} variables per account`, () => {
    const full = Array.from({ length: ENV_VAR_LIMITS.perAccount }, (_, i) => set(`V${i}`));
    spec
      .given(full)
      .when({ type: 'CreateEnvVar', at: AT, userId: 2, name: 'ONE_MORE', valueSealed: 'v1:x' })
      .thenThrows('bad_request');
  });
});

describe('sealed values (EnvVarBox)', () => {
  const box = EnvVarBox.fromConfig('ab'.repeat(32));
  it('never hold the value in the clear, and open only for their account and name under their key', () => {
    const sealed = box.seal('hunter2-secret', 2, 'HF_TOKEN');
    expect(sealed).not.toContain('hunter2');
    expect(box.open(sealed, 2, 'HF_TOKEN')).toBe('hunter2-secret');
    expect(box.open(sealed, 3, 'HF_TOKEN')).toBeNull();
    expect(box.open(sealed, 2, 'OTHER')).toBeNull();
    expect(EnvVarBox.fromConfig('cd'.repeat(32)).open(sealed, 2, 'HF_TOKEN')).toBeNull();
  });
});
