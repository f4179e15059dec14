export * from './in-process.transport';
export * from './kafka.transport';
export * from './transport-from-env';
export * from './kafka-event-source';
