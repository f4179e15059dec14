import type { InstanceActualStatus, InstanceCreated, InstanceStateChanged } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** The host's reports that `vastai reports` lists: an instance that will not run again. */
const PROBLEMS: ReadonlySet<InstanceActualStatus> = new Set<InstanceActualStatus>([
  'exited',
  'unknown',
  'offline',
]);

/**
 * Reports about machines (`GET /api/v0/machines/{id}/reports/`): renters cannot file reports here, so a
 * machine's reports are what the platform recorded going wrong on it, one per instance and problem (the
 * first time). machine_report_instances maps each instance to its machine (a report names only the instance).
 */
export const machineReportsProjection = defineProjection<InstanceCreated | InstanceStateChanged>({
  name: 'machine_reports',
  version: 1,
  sources: [{ context: 'instance', streamType: 'instance' }],
  tables: [`${SCHEMA}.machine_report_instances`, `${SCHEMA}.machine_reports`],
  eventTypes: ['InstanceCreated', 'InstanceStateChanged'],
  async apply(sql, event) {
    if (event.type === 'InstanceCreated') {
      await sql.execute(
        `INSERT INTO ${SCHEMA}.machine_report_instances (instance_id, machine_id) VALUES ($1, $2) ON CONFLICT (instance_id) DO NOTHING`,
        [event.data.instanceId, event.data.machineId],
      );
      return;
    }
    const { instanceId, actualStatus, statusMsg, at } = event.data;
    if (!PROBLEMS.has(actualStatus)) return;
    await sql.execute(
      `INSERT INTO ${SCHEMA}.machine_reports (instance_id, machine_id, problem, message, created)
       SELECT instance_id, machine_id, $2, $3, $4 FROM ${SCHEMA}.machine_report_instances WHERE instance_id = $1
       ON CONFLICT (instance_id, problem) DO NOTHING`,
      [instanceId, actualStatus, statusMsg, Date.parse(at) / 1000],
    );
  },
});
