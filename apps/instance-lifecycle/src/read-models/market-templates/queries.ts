import type { TemplateContent } from '@rigmarket/contracts';
import type { Sql } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../../schema';

export interface TemplateRecord {
  templateId: number;
  hashId: string;
  creatorId: number;
  content: TemplateContent;
}

const json = <T>(value: unknown): T => (typeof value === 'string' ? (JSON.parse(value) as T) : (value as T));

export async function findTemplate(sql: Sql, hashId: string): Promise<TemplateRecord | null> {
  const rows = await sql.query<{
    template_id: number;
    hash_id: string;
    creator_id: number;
    content: unknown;
  }>(
    `SELECT template_id, hash_id, creator_id, content FROM ${SCHEMA}.market_templates WHERE hash_id = $1 AND NOT deleted`,
    [hashId],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    templateId: Number(row.template_id),
    hashId: row.hash_id,
    creatorId: Number(row.creator_id),
    content: json<TemplateContent>(row.content),
  };
}
