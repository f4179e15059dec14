export const SYNC_RUNTIME = Symbol('SYNC_RUNTIME');
export const COPY_EXECUTOR = Symbol('COPY_EXECUTOR');
