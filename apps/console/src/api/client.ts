import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema';

export type Schemas = components['schemas'];
export type User = Schemas['User'];
export type Offer = Schemas['Offer'];
export type Instance = Schemas['Instance'];
export type InstanceCreation = Schemas['InstanceCreation'];

/** An Error object from the API (`{success: false, error, msg}`), or a failure to reach it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * How this tab is signed in. A bearer (a pasted API key, or the session key of a password login without
 * 2FA) lives in sessionStorage: a reload keeps the login, but it ends with the tab, is not shared with
 * other tabs and is never sent by the browser on its own (no cross-site request can use it); the strict CSP
 * (no inline or foreign scripts) is what keeps other scripts from reading it. A login completed with a
 * second factor gets its session as an HttpOnly cookie from the platform instead (no script can read it);
 * then only the fact that the tab uses it is stored.
 */
export type Credential = { kind: 'key'; key: string } | { kind: 'cookie' };

const KEY_STORE = 'rigmarket.key';
const COOKIE_STORE = 'rigmarket.cookie-session';

export function storedCredential(): Credential | null {
  const key = sessionStorage.getItem(KEY_STORE);
  if (key) return { kind: 'key', key };
  return sessionStorage.getItem(COOKIE_STORE) ? { kind: 'cookie' } : null;
}

export function storeCredential(credential: Credential | null): void {
  sessionStorage.removeItem(KEY_STORE);
  sessionStorage.removeItem(COOKIE_STORE);
  if (credential?.kind === 'key') sessionStorage.setItem(KEY_STORE, credential.key);
  if (credential?.kind === 'cookie') sessionStorage.setItem(COOKIE_STORE, '1');
}

const withKey: Middleware = {
  onRequest({ request }) {
    const credential = storedCredential();
    if (credential?.kind === 'key' && !request.headers.has('Authorization'))
      request.headers.set('Authorization', `Bearer ${credential.key}`);
    return request;
  },
};

/** The typed client: paths, parameters, bodies and answers come from the platform's OpenAPI document. */
export const api = createClient<paths>({ baseUrl: window.location.origin });
api.use(withKey);

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The answer's data, or an ApiError carrying the Error object's code and message. */
export async function ok<T>(call: Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await call;
  } catch {
    throw new ApiError(0, 'network', 'The platform cannot be reached');
  }
  if (answer.error !== undefined || !answer.response.ok || answer.data === undefined) {
    const body = (answer.error ?? {}) as { error?: unknown; msg?: unknown };
    throw new ApiError(
      answer.response.status,
      typeof body.error === 'string' ? body.error : 'error',
      typeof body.msg === 'string' ? body.msg : `The platform answered ${answer.response.status}`,
    );
  }
  return answer.data;
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
