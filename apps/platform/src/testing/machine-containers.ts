import { MACHINE_LABEL } from '@rigmarket/host-agent';
import type Docker from 'dockerode';

/** Removes every container a host agent made for a machine (test cleanup; the engine is shared). */
export async function removeMachineContainers(docker: Docker, machineId: number): Promise<void> {
  const leftovers = await docker.listContainers({
    all: true,
    filters: { label: [`${MACHINE_LABEL}=${machineId}`] },
  });
  await Promise.all(
    leftovers.map((c) =>
      docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => undefined),
    ),
  );
}
