import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiQuery, ApiResponse } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/**
 * A JSON Schema (OpenAPI 3.1 dialect: `type: ['string', 'null']` for nullable fields). Kept as plain data so
 * the controllers' contracts read like the wire format they describe.
 */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** Named schemas registered by the contexts, merged into `components.schemas` of the app's document. */
const NAMED = new Map<string, JsonSchema>();

/** Registers `schema` as `components.schemas[name]` and answers a `$ref` to it. */
export function namedSchema(name: string, schema: JsonSchema): JsonSchema {
  const known = NAMED.get(name);
  if (known !== undefined && JSON.stringify(known) !== JSON.stringify(schema))
    throw new Error(`Two different OpenAPI schemas are named ${name}`);
  NAMED.set(name, schema);
  return { $ref: `#/components/schemas/${name}` };
}

/** The named schemas registered so far (buildOpenApiDocument adds them to the document). */
export function namedSchemas(): Record<string, JsonSchema> {
  return Object.fromEntries([...NAMED.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

export const str: JsonSchema = { type: 'string' };
export const int: JsonSchema = { type: 'integer' };
export const num: JsonSchema = { type: 'number' };
export const bool: JsonSchema = { type: 'boolean' };
/** An object with any properties (a free-form map: env, filters, ports). */
export const anyObject: JsonSchema = { type: 'object', additionalProperties: true };
/** Any JSON value (a field the server passes through as it was given). */
export const anyValue: JsonSchema = {};

/** The same schema, or null. */
export function nullable(schema: JsonSchema): JsonSchema {
  const type = schema.type;
  if (typeof type === 'string') return { ...schema, type: [type, 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
}

export function arrayOf(items: JsonSchema): JsonSchema {
  return { type: 'array', items };
}

/**
 * An object with these properties; `required` lists those always present (by default all of them). Other
 * properties may appear (responses carry fields the contract does not promise).
 */
export function objectOf(
  properties: Record<string, JsonSchema>,
  required: readonly string[] = Object.keys(properties),
): JsonSchema {
  return { type: 'object', properties, required: [...required] };
}

/** `{success: true, ...fields}`: the usual shape of a successful answer. */
export function succeeded(
  properties: Record<string, JsonSchema> = {},
  required: readonly string[] = Object.keys(properties),
): JsonSchema {
  return objectOf({ success: { type: 'boolean', const: true }, ...properties }, ['success', ...required]);
}

/** An error status a route answers besides the common ones, with the `error` codes it may carry. */
export type ErrorAnswers = Partial<
  Record<400 | 401 | 402 | 403 | 404 | 409 | 422 | 429 | 503, readonly string[]>
>;

export interface RouteContract {
  /** The success status (Nest answers 201 to a POST without @HttpCode(200)). */
  readonly status?: 200 | 201;
  /** The success body. */
  readonly ok: JsonSchema;
  /** The success body's media type when not JSON (e.g. text/plain). */
  readonly mediaType?: string;
  /** The request body, when the route reads one. */
  readonly body?: JsonSchema;
  /** Query parameters the route reads. */
  readonly query?: Record<string, JsonSchema>;
  /** Route-specific error statuses and their codes (400, 401, 403, 413 and 429 are added for every route). */
  readonly errors?: ErrorAnswers;
}

/** The Error object, in the document as `components.schemas.Error`. */
export const ERROR_REF = { $ref: '#/components/schemas/Error' } as const;

export function errorResponse(codes: readonly string[], why: string) {
  return {
    description: `${why}; error: ${codes.join(', ')}`,
    content: { 'application/json': { schema: ERROR_REF } },
  };
}

/**
 * What a route takes and answers, for the OpenAPI document: the success status and body schema, the request
 * body and query parameters, and its own error statuses with their codes. The wire format is unchanged: this
 * is description only (the route's validation stays where it is).
 */
export function ApiContract(contract: RouteContract): MethodDecorator {
  const decorators: MethodDecorator[] = [
    ApiResponse({
      status: contract.status ?? 200,
      description: 'Success',
      content: { [contract.mediaType ?? 'application/json']: { schema: contract.ok as SchemaObject } },
    }),
  ];
  if (contract.body !== undefined)
    decorators.push(ApiBody({ required: false, schema: contract.body as SchemaObject }));
  for (const [name, schema] of Object.entries(contract.query ?? {}))
    decorators.push(ApiQuery({ name, required: false, schema: schema as SchemaObject }));
  for (const [status, codes] of Object.entries(contract.errors ?? {}))
    decorators.push(
      ApiResponse({ status: Number(status), ...errorResponse(codes ?? [], 'Refused') }) as MethodDecorator,
    );
  return applyDecorators(...decorators);
}
