import type { EventEnvelope, InstanceConfig, InstanceEvent } from '@rigmarket/contracts';
import type { Database, Sql } from '@rigmarket/event-sourcing';
import { instanceDecider } from '../instances/instance.decider';
import { config, created } from '../instances/testing/instance-fixtures';
import { SCHEMA } from '../schema';
import { writeHostCommands } from './host-commands';
import { contextDatabase } from './testing/context-database';

/**
 * A new instance's key (PGlite): its instance_keys row is written in the statement of its provision command,
 * or of its pending provision when it waits for its new volume, so the key exists exactly when the
 * instance does, and its sealed key is stored with the command that needs it.
 */
describe('writeHostCommands with a new instance key', () => {
  let db: Database;
  const key = { hash: 'a'.repeat(64), ownerId: 2 };
  const options = {
    sealedInstanceKey: 'v1:sealed-key',
    sealedImageLogin: 'v1:sealed-login',
    instanceKey: key,
  };

  /** The instance's creation, its host commands written as the command's transaction does; statements counted. */
  const create = async (event: InstanceEvent): Promise<number> => {
    let statements = 0;
    await db.transaction(async (tx) => {
      const counted: Sql = {
        query: (text, params) => ((statements += 1), tx.query(text, params)),
        execute: (text, params) => ((statements += 1), tx.execute(text, params)),
      };
      const envelope = { eventId: '00000000-0000-4000-8000-000000000007' } as EventEnvelope;
      await writeHostCommands(counted, instanceDecider.initialState(), [envelope], [event], options);
    });
    return statements;
  };

  const rows = async () => ({
    keys: await db.query(`SELECT key_hash, instance_id, owner_id FROM ${SCHEMA}.instance_keys`),
    commands: await db.query(
      `SELECT instance_id, kind, instance_key_sealed, image_login_sealed FROM ${SCHEMA}.host_commands`,
    ),
    pending: await db.query(
      `SELECT instance_id, instance_api_key_sealed, image_login_sealed FROM ${SCHEMA}.pending_provisions`,
    ),
  });

  beforeAll(async () => {
    db = await contextDatabase();
  });
  afterEach(async () => {
    for (const table of ['instance_keys', 'host_commands', 'pending_provisions'])
      await db.execute(`DELETE FROM ${SCHEMA}.${table}`);
  });
  afterAll(() => db.close());

  it('given a new instance, when its host commands are written, then its provision carries the sealed key and its key row exists, in one statement', async () => {
    const statements = await create(created);

    expect(statements).toBe(1);
    expect(await rows()).toEqual({
      keys: [{ key_hash: key.hash, instance_id: 7, owner_id: 2 }],
      commands: [
        {
          instance_id: 7,
          kind: 'provision',
          instance_key_sealed: 'v1:sealed-key',
          image_login_sealed: 'v1:sealed-login',
        },
      ],
      pending: [],
    });
  });

  it('given a new instance waiting for its new volume, when its host commands are written, then its key waits sealed in a pending provision and its key row exists, in one statement', async () => {
    const waiting = {
      ...created,
      data: {
        ...created.data,
        config: { ...config, newVolume: { sizeGb: 10, mountPath: '/data' } } as InstanceConfig,
      },
    } as InstanceEvent;

    const statements = await create(waiting);

    expect(statements).toBe(1);
    expect(await rows()).toEqual({
      keys: [{ key_hash: key.hash, instance_id: 7, owner_id: 2 }],
      commands: [],
      pending: [
        { instance_id: 7, instance_api_key_sealed: 'v1:sealed-key', image_login_sealed: 'v1:sealed-login' },
      ],
    });
  });
});
