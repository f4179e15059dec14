import request from 'supertest';
import type { App } from 'supertest/types';
import { HOST_HARDWARE, LIST_MACHINE_ASK } from './fixtures';

/**
 * What a host does before anyone can rent: registers its machine, lists it with `vastai list machine`'s ask,
 * and an admin verifies it (the CLI's offer search hides unverified machines). Answers the machine id.
 */
export async function listVerifiedMachine(
  server: App,
  adminKey: string,
  hardware: Record<string, unknown> = HOST_HARDWARE,
  ask: Record<string, unknown> = LIST_MACHINE_ASK,
): Promise<number> {
  const http = () => request(server);
  const admin = { Authorization: `Bearer ${adminKey}` };
  const machineId = (await http().post('/api/v0/machines/').set(admin).send(hardware).expect(201)).body
    .machine_id as number;
  await http()
    .put('/api/v0/machines/create_asks/')
    .set(admin)
    .send({ machine: machineId, ...ask })
    .expect(200);
  await http()
    .put(`/api/v0/machines/${machineId}/verification/`)
    .set(admin)
    .send({ verification: 'verified' })
    .expect(200);
  return machineId;
}
