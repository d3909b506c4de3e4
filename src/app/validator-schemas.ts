import { createHash } from 'node:crypto';
import type { AnySchemaObject } from 'ajv';
import { apiSchemas } from '../api/request-schemas.js';
import { playbookSchema } from '../playbook/schema.js';
import { READ_BACK_SCHEMAS, readBackSchema } from '../util/json-input.js';
import { createAjv } from '../util/ajv.js';
import { builtFile } from '../util/validators.js';

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
 * The built validators, one CommonJS file each by file name, and `index.json` naming them with the hash
 * of the schemas they were made from. A file is ajv's standalone code for one validator, wrapped in a
 * function of sitefleet's runtime (util/ajv-runtime.ts, an ES module a CommonJS file cannot require):
 * util/validators.ts requires a validator's file when it is first asked for, so a command loads the
 * code of the validators it uses and no other (the read-back schemas' are most of it, and `validate` uses none).
 */
export async function validatorFiles(): Promise<Record<string, string>> {
  const { default: standaloneCode } = (await import('ajv/dist/standalone/index.js')) as unknown as {
    default: { default: (ajv: unknown, validate: unknown) => string };
  };
  const schemas = validatedSchemas();
  const ajv = createAjv({ standalone: true });
  // The same code as an ES module's, exported as CommonJS (ajv reads `esm` only when it writes the code).
  ajv.opts.code.esm = false;
  for (const { id, schema } of schemas) ajv.addSchema(schema, schema.$id === id ? undefined : id);
  const files: Record<string, string> = {
    'index.json': JSON.stringify({ schemas_sha256: schemasSha256(schemas), validators: schemas.map(({ name }) => name) }),
  };
  for (const { name, id } of schemas) {
    files[builtFile(name)] = [
      '// Written by `npm run build` (scripts/build-validators.mjs) from schemas/ and the actions: do not edit.',
      'module.exports = function validator(sitefleet) {',
      'const module = { exports: {} };',
      standaloneCode.default(ajv, ajv.getSchema(id)),
      'return module.exports;',
      '};',
    ].join('\n');
  }
  return files;
}
