/** The PostgreSQL schema instance-lifecycle owns. */
export const SCHEMA = 'instance_lifecycle';
