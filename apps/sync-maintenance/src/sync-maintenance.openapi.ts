import { arrayOf, int, namedSchema, nullable, num, objectOf, str, succeeded } from '@rigmarket/http-kit';

/**
 * The sync-maintenance context's wire contract for the OpenAPI document (docs/api.md "The OpenAPI
 * document"): copies between instances, cloud copies, maintenance windows.
 */

const idOrText = { type: ['integer', 'string'] } as const;
const numOrText = { type: ['number', 'string'] } as const;

export const MAINTENANCE_WINDOW = namedSchema(
  'MaintenanceWindow',
  objectOf({
    machine_id: int,
    window_id: int,
    start_time: num,
    end_time: num,
    duration_hours: num,
    maintenance_category: str,
  }),
);

export const BODIES = {
  schedule: objectOf({ sdate: numOrText, duration: numOrText, maintenance_category: str }, [
    'sdate',
    'duration',
  ]),
  cancelMaintenance: objectOf({ machine_id: idOrText }, []),
  copyDirect: objectOf({ src_id: idOrText, dst_id: idOrText, src_path: str, dst_path: str }),
  cloudCopy: objectOf(
    {
      src: str,
      dst: str,
      instance_id: idOrText,
      selected: idOrText,
      transfer: { type: 'string', enum: ['Instance To Cloud', 'Cloud To Instance'] },
      flags: arrayOf(str),
    },
    ['src', 'dst', 'instance_id', 'selected', 'transfer'],
  ),
  cancelSync: objectOf({ dst_id: idOrText }),
} as const;

export const ANSWERS = {
  windows: arrayOf(MAINTENANCE_WINDOW),
  scheduled: succeeded({ msg: str, machine_id: int, window_id: int, start_time: num, end_time: num }),
  canceledMaintenance: succeeded({ ctime: num, machine_id: int, msg: str }),
  started: succeeded({ msg: str, job_id: int }),
  canceledSync: succeeded({ msg: str, job_id: nullable(int) }),
} as const;

export const QUERIES = {
  maintenances: { machine_ids: { type: 'string', description: 'A JSON list of machine ids, e.g. [42, 43]' } },
} as const;
