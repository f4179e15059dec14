import { SCHEMA } from '../../schema';

/** The usage columns of a template row (`t` = marketplace.templates), for search filters and views. */
export const TEMPLATE_USAGE_JOIN = `LEFT JOIN ${SCHEMA}.template_usage u ON u.template_id = t.template_id`;
export const COUNT_CREATED = 'COALESCE(u.count_created, 0)';
export const RECENT_CREATE_DATE = 'u.recent_create_date';
