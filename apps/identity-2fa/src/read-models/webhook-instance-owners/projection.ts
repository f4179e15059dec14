import { instanceOwnersProjection } from '@rigmarket/http-kit';
import { SCHEMA } from '../../schema';

export const WEBHOOK_INSTANCE_OWNERS_TABLE = `${SCHEMA}.webhook_instance_owners`;

/**
 * Whose each instance is and on which machine, from instance-lifecycle's events: the webhooks reactor
 * addresses an instance's state changes, outbids and copies to its renter, and a machine's maintenance to
 * the renters of its live instances.
 */
export const webhookInstanceOwnersProjection = instanceOwnersProjection({
  name: 'webhook_instance_owners',
  version: 1,
  table: WEBHOOK_INSTANCE_OWNERS_TABLE,
});
