import { readdirSync, readFileSync } from 'node:fs';
import type { AnySchemaObject, ValidateFunction } from 'ajv';
import { formatProblem, MalformedResponseError, RequestValidationError } from '../errors.js';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import { ajvProblems, createAjv } from '../util/ajv.js';
import { validatorOf } from '../util/validators.js';

/** `schemas/` at the package root, from both `src/api/` (tests) and `dist/api/` (the built CLI). */
export const SCHEMAS_DIR = new URL('../../schemas/', import.meta.url);
const API_DIR = new URL('api/', SCHEMAS_DIR);
const BASE_ID = 'https://sitefleet.dev/schemas/api/';

/** The schemas as written, by name, read on first use: the playbook schema reuses parts of them without compiling any. */
let raw: Map<string, AnySchemaObject> | undefined;
function rawSchemas(): Map<string, AnySchemaObject> {
  if (!raw) {
    raw = new Map();
    for (const file of readdirSync(API_DIR)) {
      if (file.endsWith('.schema.json'))
        raw.set(file.replace(/\.schema\.json$/, ''), JSON.parse(readFileSync(new URL(file, API_DIR), 'utf8')) as AnySchemaObject);
    }
  }
  return raw;
}

/** The API's schemas by name, and the id each is known by (they refer to each other by it). */
export function apiSchemas(): { name: string; id: string; schema: AnySchemaObject }[] {
  return [...rawSchemas()].map(([name, schema]) => ({ name, id: `${BASE_ID}${name}.schema.json`, schema }));
}

let ajv: Ajv2020 | undefined;
function validator(name: string): ValidateFunction {
  return validatorOf(`api/${name}`, () => {
    if (!ajv) {
      ajv = createAjv();
      for (const { schema } of apiSchemas()) ajv.addSchema(schema);
    }
    const fn = ajv.getSchema(`${BASE_ID}${name}.schema.json`);
    if (!fn) throw new Error(`no schema named ${name} in schemas/api/`);
    return fn;
  });
}

/** Throws RequestValidationError, naming each bad field, when `body` breaks the API's rules. */
export function assertValidBody(schemaName: string, endpoint: string, body: unknown): void {
  const validate = validator(schemaName);
  if (!validate(body)) throw new RequestValidationError(endpoint, ajvProblems(validate.errors, 'body'));
}

/**
 * Throws MalformedResponseError naming the first fields that are missing or mistyped, when an answer
 * lacks what the runner relies on: a clear error at the read, not a crash deep in the planner.
 */
export function assertValidResponse(schemaName: string, method: string, path: string, status: number, data: unknown): void {
  const validate = validator(schemaName);
  if (validate(data)) return;
  const problems = ajvProblems(validate.errors, 'response');
  throw new MalformedResponseError(
    status,
    method,
    path,
    problems.slice(0, 3).map(formatProblem).join('; ') + (problems.length > 3 ? ` (and ${problems.length - 3} more)` : ''),
  );
}

/** The problems with `body`, or an empty list. Used by the simulator to answer 400. */
export function bodyProblems(schemaName: string, body: unknown) {
  const validate = validator(schemaName);
  return validate(body) ? [] : ajvProblems(validate.errors, 'body');
}

/** An API schema as written (not compiled: that is done only for the bodies a command checks); the playbook schema reuses parts. */
export function apiSchema(name: string): Record<string, unknown> {
  const schema = rawSchemas().get(name);
  if (!schema) throw new Error(`no schema named ${name} in schemas/api/`);
  return schema;
}
