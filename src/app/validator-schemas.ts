import { createHash } from 'node:crypto';
import type { AnySchemaObject } from 'ajv';
import { apiSchemas } from '../api/request-schemas.js';
import { playbookSchema } from '../playbook/schema.js';
import { READ_BACK_SCHEMAS, readBackSchema } from '../util/json-input.js';
import { createAjv } from '../util/ajv.js';
import { validatorExport } from '../util/validators.js';

/** Every schema sitefleet validates with, by validator name (util/validators.ts), with the id ajv knows it by. */
export function validatedSchemas(): { name: string; id: string; schema: AnySchemaObject }[] {
  return [
    { name: 'playbook', id: 'playbook', schema: playbookSchema() },
    ...apiSchemas().map(({ name, id, schema }) => ({ name: `api/${name}`, id, schema })),
    ...READ_BACK_SCHEMAS.map((name) => ({ name, id: name, schema: readBackSchema(name) })),
  ];
}

/** The hash of every schema as written: the built validators carry the one they were made from. */
export function schemasSha256(schemas = validatedSchemas()): string {
  return createHash('sha256').update(JSON.stringify(schemas)).digest('hex');
}

/**
 * The built validators as one ES module: ajv's standalone code, which loads ajv's small runtime
 * helpers through `require` (made here for an ES module) and ours as `sitefleet` (util/ajv-runtime.ts).
 */
export async function validatorsModule(): Promise<string> {
  const { default: standaloneCode } = (await import('ajv/dist/standalone/index.js')) as unknown as {
    default: { default: (ajv: unknown, refs: Record<string, string>) => string };
  };
  const schemas = validatedSchemas();
  const ajv = createAjv({ standalone: true });
  for (const { id, schema } of schemas) ajv.addSchema(schema, schema.$id === id ? undefined : id);
  const code = standaloneCode.default(ajv, Object.fromEntries(schemas.map(({ name, id }) => [validatorExport(name), id])));
  return [
    '// Written by `npm run build` (scripts/build-validators.mjs) from schemas/ and the actions: do not edit.',
    "import { createRequire } from 'node:module';",
    "import * as sitefleet from '../util/ajv-runtime.js';",
    'const require = createRequire(import.meta.url);',
    `export const schemas_sha256 = ${JSON.stringify(schemasSha256(schemas))};`,
    code,
  ].join('\n');
}
