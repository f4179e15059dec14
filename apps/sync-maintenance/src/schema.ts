/** The PostgreSQL schema sync-maintenance owns. */
export const SCHEMA = 'sync_maintenance';
