import { randomUUID } from 'node:crypto';
import { type EventEnvelope, topicFor } from '@rigmarket/contracts';

export const machinesTopic = topicFor('marketplace', 'machine');
export const instancesTopic = topicFor('instance', 'instance');

/**
 * An event of one stream per topic (`machine-1` or `instance-1`: one key, so one partition), told apart by its
 * position; the rest of it is what a consumer test never reads.
 */
export const streamEvent = (topic: string, position: number): EventEnvelope => {
  const machine = topic === machinesTopic;
  return {
    eventId: randomUUID(),
    type: machine ? 'MachineRegistered' : 'InstanceCreated',
    schemaVersion: 1,
    streamId: machine ? 'machine-1' : 'instance-1',
    streamType: machine ? 'machine' : 'instance',
    streamPosition: position,
    globalPosition: String(position),
    occurredAt: '2026-05-01T12:00:00.000Z',
    context: machine ? 'marketplace' : 'instance',
    data: {},
    metadata: { correlationId: 'c', causationId: 'c' },
  };
};
