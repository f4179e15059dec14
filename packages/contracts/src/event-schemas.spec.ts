import type { EventEnvelope } from './envelope';
import { InvalidEventError, assertValidEvent, publicEventsWithoutSchema } from './event-schemas';

const envelope = (
  type: string,
  data: unknown,
  context: EventEnvelope['context'] = 'identity',
): EventEnvelope => ({
  eventId: 'e1',
  type,
  schemaVersion: 1,
  streamId: 'api_key-5',
  streamType: 'api_key',
  streamPosition: 1,
  globalPosition: '1',
  occurredAt: '2026-05-01T12:00:00.000Z',
  context,
  data,
  metadata: { correlationId: 'c', causationId: 'c' },
});

const created = {
  keyId: 5,
  userId: 2,
  name: null,
  keyHash: 'a'.repeat(64),
  permissions: { api: { machine_read: {} } },
  kind: 'api',
  createdAt: '2026-05-01T12:00:00.000Z',
};

describe('runtime schemas of public events', () => {
  it('exist for every public event', () => {
    expect(publicEventsWithoutSchema()).toEqual([]);
  });

  it('accept a well-formed payload and tolerate fields they do not know', () => {
    expect(() => assertValidEvent(envelope('ApiKeyCreated', created))).not.toThrow();
    expect(() => assertValidEvent(envelope('ApiKeyCreated', { ...created, addedLater: 1 }))).not.toThrow();
  });

  it('refuse a payload with a missing, mistyped or out-of-range field, naming each', () => {
    const { userId: _userId, ...missing } = created;
    let error: unknown;
    try {
      assertValidEvent(
        envelope('ApiKeyCreated', {
          ...missing,
          keyId: '5',
          keyHash: 'secret',
          permissions: { api: { root: {} } },
        }),
      );
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(InvalidEventError);
    const message = (error as Error).message;
    expect(message).toMatch(/^invalid identity event ApiKeyCreated v1 \(e1\): /);
    for (const field of ['keyId', 'userId', 'keyHash', 'permissions.api: Unrecognized key: "root"'])
      expect(message).toContain(field);
  });

  it('check enums', () => {
    expect(() =>
      assertValidEvent(
        envelope('MachineVerificationChanged', { machineId: 7, verification: 'trusted' }, 'marketplace'),
      ),
    ).toThrow(/verification/);
  });

  it('let types without a public schema through (private events, types this build does not know)', () => {
    expect(() => assertValidEvent(envelope('TfaMethodAdded', { anything: true }))).not.toThrow();
  });
});
