import type { InstanceCreated, InstanceDestroyed } from '@rigmarket/contracts';
import {
  type EnvelopeOf,
  type Projection,
  type Sql,
  defineProjection,
  insertsInRuns,
} from '@rigmarket/event-sourcing';

/**
 * A context's own copy of instance-lifecycle's instances (instance_id, owner_id, machine_id, destroyed),
 * from its instance events: whose each instance is and on which machine, for the contexts that address
 * an instance's renter or check an instance belongs to a machine. `table` (schema-qualified) is created by
 * the context's own migration:
 * `(instance_id INTEGER PRIMARY KEY, owner_id INTEGER NOT NULL, machine_id INTEGER NOT NULL,
 * destroyed BOOLEAN NOT NULL DEFAULT FALSE)`.
 */
export function instanceOwnersProjection(options: {
  name: string;
  version: number;
  table: string;
}): Projection {
  const { table } = options;
  type Event = InstanceCreated | InstanceDestroyed;
  const row = (event: EnvelopeOf<InstanceCreated>) => [
    event.data.instanceId,
    event.data.renter,
    event.data.machineId,
  ];
  const apply = async (sql: Sql, event: EnvelopeOf<Event>): Promise<void> => {
    switch (event.type) {
      case 'InstanceCreated':
        await sql.execute(
          `INSERT INTO ${table} (instance_id, owner_id, machine_id) VALUES ($1, $2, $3)
             ON CONFLICT (instance_id) DO NOTHING`,
          row(event),
        );
        return;
      case 'InstanceDestroyed':
        await sql.execute(`UPDATE ${table} SET destroyed = TRUE WHERE instance_id = $1`, [
          event.data.instanceId,
        ]);
        return;
    }
  };
  return defineProjection<Event>({
    name: options.name,
    version: options.version,
    sources: [{ context: 'instance', streamType: 'instance' }],
    tables: [table],
    eventTypes: ['InstanceCreated', 'InstanceDestroyed'],
    apply,
    // A delivery of many rents: their instances in one INSERT.
    applyBatch: insertsInRuns<Event, 'InstanceCreated'>({
      type: 'InstanceCreated',
      table,
      columns: [
        ['instance_id', 'int'],
        ['owner_id', 'int'],
        ['machine_id', 'int'],
      ],
      row,
      tail: 'ON CONFLICT (instance_id) DO NOTHING',
      apply,
    }),
  });
}
