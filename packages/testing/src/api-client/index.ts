import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema';

/**
 * The TypeScript client generated from the OpenAPI document (docs/api.md "The OpenAPI document"): the types
 * in schema.ts come from docs/openapi.json by openapi-typescript (`npm run api-client`, which `npm run
 * openapi` runs after writing the document), the calls go through openapi-fetch. A request or an answer
 * that the document does not describe does not type-check, so the suites that drive the platform through
 * it keep the document honest about what clients need.
 */
export type ApiPaths = paths;
export type ApiSchemas = components['schemas'];
export type ApiClient = Client<paths>;

/** A client of the platform at `baseUrl`, sending `key` as the Bearer credential when given. */
export function apiClient(baseUrl: string, key?: string): ApiClient {
  return createClient<paths>({
    baseUrl,
    headers: key === undefined ? {} : { Authorization: `Bearer ${key}` },
  });
}
