import type { INestApplication } from '@nestjs/common';
import { SimulatedHostDriver } from '@rigmarket/instance-lifecycle';
import { eventually } from '@rigmarket/testing';

/** Waits until the in-process simulated host holds exactly these authorized keys for the instance. */
export function simulatedHostKeys(app: INestApplication, instanceId: number, expected: string[]) {
  const host = app.get(SimulatedHostDriver, { strict: false });
  return eventually(
    async () =>
      JSON.stringify(host.provisioned(instanceId)?.authorizedKeys) === JSON.stringify(expected)
        ? true
        : undefined,
    30_000,
    `the simulated host's authorized_keys of instance ${instanceId}`,
  );
}
