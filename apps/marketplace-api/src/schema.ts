/** The PostgreSQL schema marketplace-api owns. */
export const SCHEMA = 'marketplace';
