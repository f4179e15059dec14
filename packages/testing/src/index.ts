export * from './decider-spec';
export * from './services';
export * from './platform-harness';
export * from './rebuild-check';
export * from './client-bodies';
export * from './projection-spec';
export * from './ssh-key';
export * from './api-client';
