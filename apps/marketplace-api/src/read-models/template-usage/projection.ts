import type { InstanceCreated } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

export const templateUsageProjection = defineProjection<InstanceCreated>({
  name: 'template_usage',
  version: 1,
  sources: [{ context: 'instance', streamType: 'instance' }],
  tables: [`${SCHEMA}.template_instances`, `${SCHEMA}.template_usage`],
  eventTypes: ['InstanceCreated'],
  async apply(sql, event) {
    if (event.type !== 'InstanceCreated') return;
    const templateId = event.data.templateId;
    // Events from before templateId was carried (or without a template) count for no template.
    if (templateId === undefined || templateId === null) return;
    const createdAt = Date.parse(event.data.createdAt) / 1000;
    const inserted = await sql.query<{ instance_id: number }>(
      `INSERT INTO ${SCHEMA}.template_instances (instance_id, template_id, created_at) VALUES ($1, $2, $3)
       ON CONFLICT (instance_id) DO NOTHING RETURNING instance_id`,
      [event.data.instanceId, templateId, createdAt],
    );
    if (inserted.length === 0) return;
    await sql.execute(
      // Aliased: a rebuild applies this to a scratch table of another name.
      `INSERT INTO ${SCHEMA}.template_usage AS u (template_id, count_created, recent_create_date) VALUES ($1, 1, $2)
       ON CONFLICT (template_id) DO UPDATE SET count_created = u.count_created + 1,
         recent_create_date = GREATEST(u.recent_create_date, EXCLUDED.recent_create_date)`,
      [templateId, createdAt],
    );
  },
});
