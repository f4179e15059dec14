import type { Migration } from '@rigmarket/event-sourcing';

/** read-models/volume-instances: the instances each volume is mounted in (`vastai show volumes`). */
export const volumeInstances: Migration = {
  id: '0019-volume-instances',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.volume_instances (
        volume_id INTEGER NOT NULL,
        instance_id INTEGER NOT NULL,
        PRIMARY KEY (volume_id, instance_id)
      )`);
    await sql.execute(`CREATE INDEX volume_instances_by_instance ON ${s}.volume_instances (instance_id)`);
  },
};
