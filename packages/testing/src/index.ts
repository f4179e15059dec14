export * from './decider-spec';
export * from './services';
