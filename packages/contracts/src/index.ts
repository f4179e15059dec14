export * from './envelope';
export * from './topics';
export * from './errors';
export * from './permissions';
export * from './identity';
export * from './marketplace';
export * from './instance';
export * from './schema-registry';
