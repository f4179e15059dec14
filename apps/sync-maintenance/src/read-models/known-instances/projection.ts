import { instanceOwnersProjection } from '@rigmarket/http-kit';
import { SCHEMA } from '../../schema';

/** Instance owners and machines, from instance-lifecycle's instance events. */
export const knownInstancesProjection = instanceOwnersProjection({
  name: 'known_instances',
  version: 1,
  table: `${SCHEMA}.known_instances`,
});
