import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SPEC_ENDPOINTS, type SpecEndpoint, type SpecField, type SpecType } from './spec-tables';

/**
 * The differential test against the owner's spec (docs/api.md "The OpenAPI document"): for each of the
 * spec's 29 endpoints (spec-tables.ts), the committed document (docs/openapi.json, which openapi.e2e-spec
 * keeps equal to what the code generates) has the operation, and every request and response field the spec
 * names, with the spec's type and its required status. The document may add `null` to a type (a value not
 * known yet, e.g. ssh_host before boot) and may always send a response field the spec calls conditional; it
 * may not drop a field, change its type, or require in a request what the spec makes optional.
 */

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  const?: unknown;
};
type Operation = {
  parameters?: { name: string; in: string; schema?: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
};
type Document = {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};

const document = JSON.parse(
  readFileSync(join(__dirname, '..', '..', '..', 'docs', 'openapi.json'), 'utf8'),
) as Document;

/** A schema with its $refs, allOf, anyOf and oneOf folded: its types, properties and required names. */
interface Flat {
  types: Set<string> | 'any';
  properties: Map<string, Schema>;
  required: Set<string>;
  items: Schema[];
}

function deref(schema: Schema): Schema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.replace('#/components/schemas/', '');
  const target = document.components.schemas[name];
  if (!target) throw new Error(`dangling ${schema.$ref}`);
  return deref(target);
}

function flatten(raw: Schema): Flat {
  const schema = deref(raw);
  const own: Flat = {
    types:
      schema.type === undefined
        ? schema.properties
          ? new Set(['object'])
          : 'any'
        : new Set(Array.isArray(schema.type) ? schema.type : [schema.type]),
    properties: new Map(Object.entries(schema.properties ?? {})),
    required: new Set(schema.required ?? []),
    items: schema.items ? [schema.items] : [],
  };
  const parts = (schema.allOf ?? []).map(flatten);
  for (const part of parts) {
    if (own.types === 'any') own.types = part.types;
    for (const [k, v] of part.properties) own.properties.set(k, v);
    for (const r of part.required) own.required.add(r);
    own.items.push(...part.items);
  }
  // An answer only a query parameter outside the spec asks for (x-only-with-query: an as-of read) is not
  // what the spec's clients get: it does not count against the spec's fields.
  const alternatives = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]
    .filter((alt) => !(deref(alt) as { 'x-only-with-query'?: string })['x-only-with-query'])
    .map(flatten);
  if (alternatives.length > 0) {
    const types = new Set<string>();
    let any = false;
    for (const alt of alternatives) {
      if (alt.types === 'any') any = true;
      else alt.types.forEach((t) => types.add(t));
      for (const [k, v] of alt.properties) if (!own.properties.has(k)) own.properties.set(k, v);
      own.items.push(...alt.items);
    }
    // A null alternative says the whole value may be null, not that its fields may be missing.
    const required = alternatives
      .filter((a) => a.types === 'any' || [...a.types].some((t) => t !== 'null'))
      .map((a) => a.required);
    for (const name of required[0] ?? []) if (required.every((r) => r.has(name))) own.required.add(name);
    if (own.types === 'any' && !any) own.types = types;
  }
  return own;
}

function typeOk(spec: SpecField['type'], doc: Flat['types']): boolean {
  if (doc === 'any') return true;
  const wanted: readonly SpecType[] = typeof spec === 'string' ? [spec] : spec;
  // A spec number accepts the document's integer only where the spec says integer; the reverse is a difference.
  return wanted.every((t) => doc.has(t));
}

/** The differences between the spec's fields and a schema (empty when they agree). */
function compare(
  root: Schema | undefined,
  fields: Readonly<Record<string, SpecField>>,
  side: 'request' | 'response',
) {
  const problems: string[] = [];
  if (!root) return Object.keys(fields).length > 0 ? [`no ${side} body schema`] : [];
  for (const [path, field] of Object.entries(fields)) {
    let container = flatten(root);
    const segments = path.split('.');
    let node: Flat | undefined;
    for (const [i, segment] of segments.entries()) {
      const name = segment.replace(/\[\]$/, '');
      const property = container.properties.get(name);
      if (!property) {
        problems.push(`${side} ${path}: ${name} missing`);
        node = undefined;
        break;
      }
      node = flatten(property);
      if (i === segments.length - 1) {
        if (field.required === true && !container.required.has(name))
          problems.push(`${side} ${path}: required by the spec, optional in the document`);
        if (field.required === false && side === 'request' && container.required.has(name))
          problems.push(`${side} ${path}: optional in the spec, required in the document`);
      }
      if (segment.endsWith('[]')) {
        const items = node.items[0];
        if (!items) {
          problems.push(`${side} ${path}: ${name} is not an array of items`);
          node = undefined;
          break;
        }
        node = flatten(items);
      }
      container = node;
    }
    if (node && !typeOk(field.type, node.types))
      problems.push(
        `${side} ${path}: spec ${JSON.stringify(field.type)}, document ${JSON.stringify(node.types === 'any' ? 'any' : [...node.types])}`,
      );
  }
  return problems;
}

const shape = (path: string) => path.replace(/\{\w+\}/g, '{}');

function operationOf(endpoint: SpecEndpoint): Operation | undefined {
  const path = Object.keys(document.paths).find((p) => shape(p) === shape(endpoint.path));
  return path === undefined ? undefined : document.paths[path]?.[endpoint.method];
}

function successSchema(operation: Operation): Schema | undefined {
  const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))?.[1];
  return success?.content?.['application/json']?.schema;
}

describe('the OpenAPI document against the spec tables', () => {
  it('covers the 29 endpoints of the spec', () => {
    expect(SPEC_ENDPOINTS).toHaveLength(29);
    expect(SPEC_ENDPOINTS.filter((e) => !operationOf(e)).map((e) => `${e.method} ${e.path}`)).toEqual([]);
  });

  it.each(SPEC_ENDPOINTS.map((e) => [`${e.method.toUpperCase()} ${e.path}`, e] as const))(
    '%s: request and response fields match the spec (names, types, required)',
    (_name, endpoint) => {
      const operation = operationOf(endpoint)!;
      const problems = [
        ...compare(
          operation.requestBody?.content['application/json']?.schema,
          endpoint.request ?? {},
          'request',
        ),
        ...compare(successSchema(operation), endpoint.response ?? {}, 'response'),
      ];
      for (const [name, field] of Object.entries(endpoint.query ?? {})) {
        const parameter = operation.parameters?.find((p) => p.in === 'query' && p.name === name);
        if (!parameter) problems.push(`query ${name} missing`);
        else if (!typeOk(field.type, flatten(parameter.schema ?? {}).types))
          problems.push(`query ${name}: type`);
      }
      expect(problems).toEqual([]);
    },
  );
});
