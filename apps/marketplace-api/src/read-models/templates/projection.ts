import type { TemplateContent, TemplateEvent } from '@rigmarket/contracts';
import { defineProjection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

const epoch = (iso: string) => Date.parse(iso) / 1000;

function templateColumns(content: TemplateContent): unknown[] {
  return [
    content.name,
    content.image,
    content.tag,
    content.docker_login_repo,
    content.jup_direct,
    content.ssh_direct,
    content.use_ssh,
    content.recommended_disk_space,
    content.private,
    JSON.stringify(content),
  ];
}

export const templatesProjection = defineProjection<TemplateEvent>({
  name: 'templates',
  version: 1,
  sources: [{ context: 'marketplace', streamType: 'template' }],
  tables: [`${SCHEMA}.templates`],
  eventTypes: ['TemplateCreated', 'TemplateEdited', 'TemplateDeleted'],
  async apply(sql, event) {
    const t = `${SCHEMA}.templates`;
    switch (event.type) {
      case 'TemplateCreated':
        await sql.execute(
          `INSERT INTO ${t} (name, image, tag, docker_login_repo, jup_direct, ssh_direct, use_ssh, recommended_disk_space, private, content,
                             template_id, hash_id, creator_id, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
          [
            ...templateColumns(event.data.content),
            event.data.templateId,
            event.data.hashId,
            event.data.creatorId,
            epoch(event.data.createdAt),
          ],
        );
        return;
      case 'TemplateEdited':
        await sql.execute(
          `UPDATE ${t} SET name = $1, image = $2, tag = $3, docker_login_repo = $4, jup_direct = $5, ssh_direct = $6, use_ssh = $7,
                  recommended_disk_space = $8, private = $9, content = $10, hash_id = $12
            WHERE template_id = $11`,
          [...templateColumns(event.data.content), event.data.templateId, event.data.hashId],
        );
        return;
      case 'TemplateDeleted':
        await sql.execute(`DELETE FROM ${t} WHERE template_id = $1`, [event.data.templateId]);
        return;
    }
  },
});
