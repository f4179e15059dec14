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

export function findTemplate(sql: Sql, hashId: string): Promise<TemplateRecord | null> {
  return findTemplateBy(sql, 'hash_id', hashId);
}

/** The template by its numeric id (its current revision). */
export function findTemplateById(sql: Sql, templateId: number): Promise<TemplateRecord | null> {
  return findTemplateBy(sql, 'template_id', templateId);
}

async function findTemplateBy(
  sql: Sql,
  column: 'hash_id' | 'template_id',
  value: string | number,
): Promise<TemplateRecord | null> {
  const rows = await sql.query<{
    template_id: number;
    hash_id: string;
    creator_id: number;
    content: unknown;
  }>(
    `SELECT template_id, hash_id, creator_id, content FROM ${SCHEMA}.market_templates WHERE ${column} = $1 AND NOT deleted`,
    [value],
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
