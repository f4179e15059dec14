/** The PostgreSQL schema identity-2fa owns. */
export const SCHEMA = 'identity';
