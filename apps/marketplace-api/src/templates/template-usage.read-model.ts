import type { EventEnvelope, InstanceEvent } from '@rigmarket/contracts';
import type { Migration, Projection } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../marketplace.read-models';

/**
 * Templates' count_created / recent_create_date, from instance-lifecycle's public InstanceCreated (which
 * names the template's numeric id: its hash changes on every edit, the id does not). Its own read model,
 * fed by instance events only, joined to `templates` at search time: the templates projection (template
 * events) and this one can each be rebuilt alone to the same rows. One row per created instance, so a
 * redelivered event counts once; destroying an instance changes nothing (count_created counts creations).
 */
export const templateUsageMigration: Migration = {
  id: '0008-template-usage',
  async up(sql, s) {
    await sql.execute(`
      CREATE TABLE ${s}.template_instances (
        instance_id INTEGER PRIMARY KEY,
        template_id INTEGER NOT NULL,
        created_at DOUBLE PRECISION NOT NULL
      )`);
    await sql.execute(`
      CREATE TABLE ${s}.template_usage (
        template_id INTEGER PRIMARY KEY,
        count_created INTEGER NOT NULL,
        recent_create_date DOUBLE PRECISION NOT NULL
      )`);
    // 0003's columns on templates were never fed: the values live here, joined at read time.
    await sql.execute(`ALTER TABLE ${s}.templates DROP COLUMN count_created, DROP COLUMN recent_create_date`);
  },
};

export const templateUsageProjection: Projection = {
  name: 'template_usage',
  version: 1,
  sources: [{ context: 'instance', streamType: 'instance' }],
  tables: [`${SCHEMA}.template_instances`, `${SCHEMA}.template_usage`],
  async apply(sql, envelope: EventEnvelope) {
    const event = { type: envelope.type, data: envelope.data } as InstanceEvent;
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
      `INSERT INTO ${SCHEMA}.template_usage (template_id, count_created, recent_create_date) VALUES ($1, 1, $2)
       ON CONFLICT (template_id) DO UPDATE SET count_created = template_usage.count_created + 1,
         recent_create_date = GREATEST(template_usage.recent_create_date, EXCLUDED.recent_create_date)`,
      [templateId, createdAt],
    );
  },
};

/** The usage columns of a template row (`t` = marketplace.templates), for search filters and views. */
export const TEMPLATE_USAGE_JOIN = `LEFT JOIN ${SCHEMA}.template_usage u ON u.template_id = t.template_id`;
export const COUNT_CREATED = 'COALESCE(u.count_created, 0)';
export const RECENT_CREATE_DATE = 'u.recent_create_date';
