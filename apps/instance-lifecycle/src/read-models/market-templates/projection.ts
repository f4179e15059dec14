import type { TemplateEvent } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

/** Templates by hash id (template_hash_id on renting): marketplace's template events. */
export const marketTemplatesProjection = defineProjection<TemplateEvent>({
  name: 'market_templates',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'template' }],
  tables: [`${SCHEMA}.market_templates`],
  eventTypes: ['TemplateCreated', 'TemplateEdited', 'TemplateDeleted'],
  async apply(sql, event) {
    const table = `${SCHEMA}.market_templates`;
    switch (event.type) {
      case 'TemplateCreated':
        await sql.execute(
          `INSERT INTO ${table} (template_id, hash_id, creator_id, content) VALUES ($1, $2, $3, $4) ON CONFLICT (template_id) DO NOTHING`,
          [
            event.data.templateId,
            event.data.hashId,
            event.data.creatorId,
            JSON.stringify(event.data.content),
          ],
        );
        return;
      case 'TemplateEdited':
        await sql.execute(`UPDATE ${table} SET hash_id = $2, content = $3 WHERE template_id = $1`, [
          event.data.templateId,
          event.data.hashId,
          JSON.stringify(event.data.content),
        ]);
        return;
      case 'TemplateDeleted':
        await sql.execute(`UPDATE ${table} SET deleted = TRUE WHERE template_id = $1`, [
          event.data.templateId,
        ]);
        return;
    }
  },
});
