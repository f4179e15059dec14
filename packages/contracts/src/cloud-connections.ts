import type { DomainEvent } from './envelope';

/**
 * Public events of instance-lifecycle about its accounts' cloud connections (`cloud_connections-<userId>`),
 * without their credentials (those stay in the private CloudConnectionAdded). sync-maintenance projects them
 * to refuse, with 404, a cloud copy that names a connection the caller does not have.
 */
export type CloudConnectionListed = DomainEvent<
  'CloudConnectionListed',
  { userId: number; connectionId: number; at: string }
>;
export type CloudConnectionRemoved = DomainEvent<
  'CloudConnectionRemoved',
  { userId: number; connectionId: number; at: string }
>;
export type CloudConnectionPublicEvent = CloudConnectionListed | CloudConnectionRemoved;

export const CloudConnectionPublicEvents = {
  CloudConnectionListed: { schemaVersion: 1, streamType: 'cloud_connections' },
  CloudConnectionRemoved: { schemaVersion: 1, streamType: 'cloud_connections' },
} as const;

/** Where cloud connections are published and the events a read model of them follows. */
export const CLOUD_CONNECTION_FEED = {
  sources: [{ context: 'instance', streamType: 'cloud_connections' }],
  eventTypes: ['CloudConnectionListed', 'CloudConnectionRemoved'],
} as const satisfies {
  sources: readonly object[];
  eventTypes: readonly CloudConnectionPublicEvent['type'][];
};
