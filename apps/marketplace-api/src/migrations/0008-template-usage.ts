import type { Migration } from '@rigmarket/event-sourcing';

/**
 * Templates' count_created / recent_create_date, from instance-lifecycle's public InstanceCreated (which
 * names the template's numeric id: its hash changes on every edit, the id does not). Its own read model,
 * fed by instance events only, joined to `templates` at search time: the templates projection (template
 * events) and this one can each be rebuilt alone to the same rows. One row per created instance, so a
 * redelivered event counts once; destroying an instance changes nothing (count_created counts creations).
 */
export const templateUsage: Migration = {
  id: '0008-template-usage',
  replaces: '0008-template-usage',
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
