import type { HostAgentEnrolled } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** Machines served by a host agent (instance-lifecycle's HostAgentEnrolled), with the agent's driver. */
export const agentMachinesProjection = defineProjection<HostAgentEnrolled>({
  name: 'agent_machines',
  version: 1,
  sources: [{ context: 'instance', streamType: 'hostagent' }],
  tables: [`${SCHEMA}.agent_machines`],
  eventTypes: ['HostAgentEnrolled'],
  async apply(sql, event) {
    await sql.execute(
      `INSERT INTO ${SCHEMA}.agent_machines (machine_id, driver) VALUES ($1, $2) ON CONFLICT (machine_id) DO NOTHING`,
      [event.data.machineId, event.data.driver],
    );
  },
});
