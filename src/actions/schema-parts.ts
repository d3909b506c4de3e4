import { apiSchema } from '../api/request-schemas.js';

/**
 * Pieces of the API's request schemas for the playbook's `with:` blocks, with their `$ref`s to
 * `common.schema.json` inlined, so the published playbook schema stands alone for editors.
 */
const common = apiSchema('common') as { $defs: Record<string, unknown> };

function inline(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(inline);
  if (typeof value !== 'object' || value === null) return value;
  const ref = (value as { $ref?: string }).$ref;
  if (ref?.startsWith('common.schema.json#/$defs/')) return inline(common.$defs[ref.slice('common.schema.json#/$defs/'.length)]);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inline(v)]));
}

/** The schema of `field` in the body schema `body`, e.g. field('modify-php-version', 'php_version'). */
export function field(body: string, name: string): Record<string, unknown> {
  const props = (apiSchema(body) as { properties: Record<string, unknown> }).properties;
  if (!(name in props)) throw new Error(`schemas/api/${body}: no field ${name}`);
  return inline(props[name]) as Record<string, unknown>;
}

export function commonDef(name: string): Record<string, unknown> {
  return inline(common.$defs[name]) as Record<string, unknown>;
}

/** A `with:` block: an object of exactly these fields. */
export function withBlock(properties: Record<string, unknown>, required: string[] = []): Record<string, unknown> {
  return { type: 'object', additionalProperties: false, required, properties };
}

/** The cross-field rules of an API body schema (if/then, dependentRequired), for a `with:` block mirroring it. */
export function conditionsOf(body: string): Record<string, unknown> {
  const schema = apiSchema(body);
  return Object.fromEntries(['if', 'then', 'dependentRequired'].filter((k) => k in schema).map((k) => [k, inline(schema[k])]));
}

/** A string that may hold `{{date}}`, `{{env}}`, `{{site}}` or `{{env_id}}`; checked once expanded. */
export function template(description: string): Record<string, unknown> {
  return { type: 'string', minLength: 1, description };
}

/** A secret: never written in a playbook, only referenced. Resolved when the call is sent. */
export function secretRef(description: string): Record<string, unknown> {
  return {
    type: 'string',
    pattern: '^\\$\\{[A-Za-z_][A-Za-z0-9_]*\\}$',
    description: `${description}: a \${ENV_VAR} reference, never the secret itself`,
    'x-secret': true,
  };
}

export const globs = {
  oneOf: [
    { type: 'string', minLength: 1 },
    { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
  ],
};

export const uuid = commonDef('uuid');
