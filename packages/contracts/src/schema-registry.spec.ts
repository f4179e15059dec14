import type { EventEnvelope } from './envelope';
import { registerUpcaster, upcast } from './schema-registry';

const envelope = (type: string, schemaVersion: number, data: unknown): EventEnvelope => ({
  eventId: 'e',
  type,
  schemaVersion,
  streamId: 'thing-1',
  streamType: 'thing',
  streamPosition: 1,
  globalPosition: '1',
  occurredAt: '2026-01-01T00:00:00.000Z',
  context: 'identity',
  data,
  metadata: { correlationId: 'c', causationId: 'c' },
});

describe('upcasting old event versions', () => {
  registerUpcaster('ThingRenamed', 1, (d) => ({ ...(d as object), label: (d as { name: string }).name }));
  registerUpcaster('ThingRenamed', 2, (d) => ({
    ...(d as object),
    labels: [(d as { label: string }).label],
  }));

  it('applies every step from the stored version to the target', () => {
    const up = upcast(envelope('ThingRenamed', 1, { name: 'gpu' }), 3);
    expect(up.schemaVersion).toBe(3);
    expect(up.data).toEqual({ name: 'gpu', label: 'gpu', labels: ['gpu'] });
  });

  it('leaves a current event untouched', () => {
    const current = envelope('ThingRenamed', 3, { labels: ['x'] });
    expect(upcast(current, 3)).toBe(current);
  });

  it('refuses to guess when a step is missing', () => {
    expect(() => upcast(envelope('Unregistered', 1, {}), 2)).toThrow(
      'No upcaster for Unregistered from schema version 1',
    );
  });
});

describe('InstanceBillingChanged version 1 (float dollars per hour)', () => {
  it('is read as integer micro-dollars per hour, rounded to the nearest', async () => {
    await import('./ledger-upcasters');
    const v1 = {
      ...envelope('InstanceBillingChanged', 1, {
        instanceId: 7,
        renter: 2,
        hostId: 1,
        machineId: 3,
        billing: 'compute',
        ratePerHour: 1.2016666666666667,
        at: '2026-01-01T00:00:00.000Z',
      }),
      context: 'instance' as const,
      streamType: 'instance',
    };
    const up = upcast(v1);
    expect(up.schemaVersion).toBe(2);
    expect(up.data).toEqual({
      instanceId: 7,
      renter: 2,
      hostId: 1,
      machineId: 3,
      billing: 'compute',
      ratePerHourMicros: 1_201_667,
      at: '2026-01-01T00:00:00.000Z',
    });
  });
});
