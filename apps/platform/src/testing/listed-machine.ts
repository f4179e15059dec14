import { eventually } from '@rigmarket/testing';
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

/**
 * A rent's answer once instance-lifecycle has the offer's machine and its listing: until then it answers
 * 404 no_such_offer (no machine yet) or 409 offer_unavailable (the machine, not yet its listing), and the
 * rent is sent again. Distributed, MachineRegistered and MachineListed reach instance-lifecycle over Kafka
 * after marketplace answered the listing. Any other answer is the result.
 */
export function rentOnceListed(
  rent: () => Promise<request.Response>,
  what: string,
  timeoutMs = 60_000,
): Promise<request.Response> {
  return eventually(
    async () => {
      const res = await rent();
      const notYetThere =
        (res.status === 404 && res.body.error === 'no_such_offer') ||
        (res.status === 409 && res.body.error === 'offer_unavailable');
      return notYetThere ? undefined : res;
    },
    timeoutMs,
    what,
  );
}
