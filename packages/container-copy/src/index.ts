export * from './archive';
export * from './throttle';
