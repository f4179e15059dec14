import type { InstanceCreated, InstanceStateChanged } from '@rigmarket/contracts';
import { projectionSpec } from '@rigmarket/testing';
import { instanceLifecycleContext } from '../../instance-lifecycle.context';
import { machineReportsProjection } from './projection';

const AT = '2026-05-01T12:00:00.000Z';
const created = (instanceId: number, machineId: number) => ({
  streamId: `instance-${instanceId}`,
  type: 'InstanceCreated' as const,
  data: { instanceId, machineId } as InstanceCreated['data'],
});
const reported = (
  instanceId: number,
  actualStatus: InstanceStateChanged['data']['actualStatus'],
  statusMsg: string | null,
) => ({
  streamId: `instance-${instanceId}`,
  type: 'InstanceStateChanged' as const,
  data: { instanceId, actualStatus, sshHost: null, sshPort: null, ports: {}, statusMsg, at: AT },
});

describe('machine_reports projection', () => {
  const spec = projectionSpec(instanceLifecycleContext, machineReportsProjection);
  afterAll(() => spec.close());

  it('records, per machine, the instances that exited or were lost, once per problem', () =>
    spec
      .given([
        created(1, 7),
        created(2, 7),
        created(3, 8),
        reported(1, 'running', null),
        reported(1, 'exited', 'exit code 1'),
        reported(3, 'offline', 'host offline'),
        reported(2, 'loading', null),
      ])
      .when(reported(1, 'exited', 'exit code 2'))
      .then(
        `SELECT machine_id, instance_id, problem, message, created FROM instance_lifecycle.machine_reports ORDER BY instance_id`,
        [
          {
            machine_id: 7,
            instance_id: 1,
            problem: 'exited',
            message: 'exit code 1',
            created: Date.parse(AT) / 1000,
          },
          {
            machine_id: 8,
            instance_id: 3,
            problem: 'offline',
            message: 'host offline',
            created: Date.parse(AT) / 1000,
          },
        ],
      ));
});
