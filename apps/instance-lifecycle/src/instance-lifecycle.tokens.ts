export const INSTANCE_RUNTIME = Symbol('INSTANCE_RUNTIME');
export const HOST_DRIVER = Symbol('HOST_DRIVER');
export const SIMULATED_HOST_TIMINGS = Symbol('SIMULATED_HOST_TIMINGS');
export const LOG_STORE = Symbol('LOG_STORE');
export const PENDING_KEY_BOX = Symbol('PENDING_KEY_BOX');
export const REGISTRY_LOGIN_BOX = Symbol('REGISTRY_LOGIN_BOX');
