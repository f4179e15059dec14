import type { IncomingMessage } from 'node:http';
import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { ApiError } from '@rigmarket/contracts';

/**
 * Request limits at the edge of every app (docs/api.md "Limits"). Checked in this order:
 * 1. body size (the JSON parser, 413) and JSON shape (nesting depth, array length) on the raw bytes before
 *    JSON.parse builds anything, so a hostile body never reaches a deeper parser (PGlite's jsonb, a decider);
 * 2. after authentication (a global pipe, so an anonymous caller gets 401/403 first), every string in the
 *    body, the query and the path: no NUL, well-formed UTF-16, at most its field's length; numeric path ids
 *    fit the int4 columns they are looked up in.
 */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Objects and arrays nested deeper than this are refused (400). */
export const MAX_JSON_DEPTH = 32;
/** Arrays with more elements than this are refused (400). */
export const MAX_ARRAY_LENGTH = 1000;
/** Any string value (or object key) without a limit of its own. */
export const DEFAULT_MAX_STRING_LENGTH = 65_536;
/** Largest id a path may name: ids are PostgreSQL `integer` columns. */
export const MAX_PATH_ID = 2_147_483_647;
/**
 * An offer id is `machine_id * 1000 + GPUs` (docs/marketplace.md), so it outgrows an integer column once
 * machine ids pass 2,147,483: its bound is the largest machine id's largest offer.
 */
export const MAX_OFFER_ID = MAX_PATH_ID * 1000 + 999;
const PATH_ID_MAX: Readonly<Record<string, number>> = { offerId: MAX_OFFER_ID };

/** Per field (the last key of its path), in UTF-16 code units. */
export const FIELD_MAX_LENGTH: Readonly<Record<string, number>> = {
  label: 1024,
  name: 256,
  username: 256,
  fullname: 256,
  email: 254,
  password: 1024,
  new_password: 1024,
  image: 512,
  docker_login_repo: 512,
  docker_login_user: 256,
  docker_login_pass: 4096,
  env: 16_384,
  args: 16_384,
  args_str: 16_384,
  onstart: 65_536,
  onstart_cmd: 65_536,
  readme: 65_536,
  desc: 4096,
  description: 4096,
  href: 2048,
  repo: 512,
  tag: 256,
  gpu_name: 256,
  filter: 1024,
};

const limitError = (message: string) => Object.assign(new Error(message), { status: 400, expose: true });

/**
 * A single pass over the raw JSON bytes (strings skipped, escapes honoured) that refuses nesting deeper than
 * MAX_JSON_DEPTH and arrays longer than MAX_ARRAY_LENGTH. Linear in the body size, no allocation per byte.
 * Malformed JSON is left to JSON.parse.
 */
export function checkJsonShape(
  body: Buffer,
  maxDepth = MAX_JSON_DEPTH,
  maxArrayLength = MAX_ARRAY_LENGTH,
): void {
  // counts[d] is the element count of the array open at depth d, or -1 for an object.
  const counts: number[] = [];
  let inString = false;
  let escaped = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 0x5c) escaped = true;
      else if (c === 0x22) inString = false;
      continue;
    }
    switch (c) {
      case 0x22: // "
        inString = true;
        break;
      case 0x7b: // {
      case 0x5b: // [
        if (counts.length >= maxDepth)
          throw limitError(`Request body nests objects or arrays deeper than ${maxDepth} levels`);
        counts.push(c === 0x5b ? 0 : -1);
        break;
      case 0x7d: // }
      case 0x5d: // ]
        counts.pop();
        break;
      case 0x2c: {
        // ,
        const top = counts.length - 1;
        const count = counts[top];
        if (count !== undefined && count >= 0) {
          counts[top] = count + 1;
          if (count + 2 > maxArrayLength)
            throw limitError(`Request body has an array longer than ${maxArrayLength} elements`);
        }
        break;
      }
    }
  }
}

/** body-parser's `verify` hook: runs on the raw bytes before JSON.parse. */
export function verifyJsonBody(_req: IncomingMessage, _res: unknown, body: Buffer): void {
  checkJsonShape(body);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string is refused, or undefined when it is fine. */
export function badString(value: string, maxLength: number): string | undefined {
  if (value.length > maxLength) return `is longer than ${maxLength} characters`;
  if (value.includes('\u0000')) return 'contains a NUL character';
  if (LONE_SURROGATE.test(value)) return 'is not valid UTF-16 (lone surrogate)';
  return undefined;
}

function maxLengthOf(field: string): number {
  return FIELD_MAX_LENGTH[field] ?? DEFAULT_MAX_STRING_LENGTH;
}

/**
 * Walks a parsed value (bounded: the body's depth and array length are checked before parsing, the query
 * parser has its own depth) and throws a 400 naming the first bad string's field.
 */
export function checkStrings(value: unknown, path: string, field: string, depth = 0): void {
  if (depth > MAX_JSON_DEPTH + 8) throw ApiError.badRequest(`${path || 'body'} nests too deep`);
  if (typeof value === 'string') {
    const why = badString(value, maxLengthOf(field));
    if (why) throw ApiError.badRequest(`Invalid request: ${path || field || 'value'} ${why}`);
    return;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value))
      throw ApiError.badRequest(`Invalid request: ${path || 'value'} is not a finite number`);
    return;
  }
  if (Array.isArray(value)) {
    if (value.length > MAX_ARRAY_LENGTH)
      throw ApiError.badRequest(`Invalid request: ${path} has more than ${MAX_ARRAY_LENGTH} elements`);
    value.forEach((item, i) => checkStrings(item, `${path}[${i}]`, field, depth + 1));
    return;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      const why = badString(key, 256);
      if (why) throw ApiError.badRequest(`Invalid request: a key in ${path || 'the body'} ${why}`);
      checkStrings(item, path ? `${path}.${key}` : key, key, depth + 1);
    }
  }
}

const ID_PARAM = /(^id$|Id$|_id$)/;

/**
 * Global pipe (before class-validator): every body, query and path argument passes checkStrings; a path
 * parameter named like an id that is all digits must fit MAX_PATH_ID. Pipes run after guards, so these
 * 400s come only after authentication.
 */
@Injectable()
export class InputLimitsPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'body' && metadata.type !== 'query' && metadata.type !== 'param') return value;
    const name = metadata.data ?? '';
    checkStrings(value, name, name);
    if (
      metadata.type === 'param' &&
      typeof value === 'string' &&
      ID_PARAM.test(name) &&
      /^\d+$/.test(value)
    ) {
      const max = PATH_ID_MAX[name] ?? MAX_PATH_ID;
      if (value.length > String(max).length || Number(value) > max)
        throw ApiError.badRequest(`Invalid request: ${name} ${value.slice(0, 20)} is out of range`);
    }
    return value;
  }
}

/** A JSON object (not null, not an array): what a body or a nested field must be before its keys are read. */
export const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
