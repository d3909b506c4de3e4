import type { ValidateFunction } from 'ajv';

/**
 * The validators, compiled at build time when the CLI was built (`npm run build` writes
 * dist/generated/validators.js from the schemas: scripts/build-validators.mjs), else at run time.
 * Compiling the playbook schema alone costs ~150 ms of ajv code generation, which every `validate`
 * and `run` would pay at start-up. Run from the sources (the tests), nothing is built: the
 * schemas are compiled as before, by the same ajv setup, and test/validators.test.ts holds the two equal.
 */

/** The name of a validator: `playbook`, `api/<schema name>`, or a read-back schema's file name. */
export type ValidatorName = string;

/** The module the build writes: each validator under its export name (validatorExport), and the hash of the schemas it was made from. */
export interface BuiltValidators {
  schemas_sha256: string;
  [name: string]: ValidateFunction | string;
}

/** `api/add-domain` → `api_add_domain`: names the built module exports. */
export function validatorExport(name: ValidatorName): string {
  return name.replace(/[^A-Za-z0-9]/g, '_');
}

const BUILT_URL = new URL('../generated/validators.js', import.meta.url);

let built: Promise<BuiltValidators | undefined> | undefined;

/** The validators built with the CLI, or undefined when there are none (run from the sources). */
export function builtValidators(): Promise<BuiltValidators | undefined> {
  built ??= import(BUILT_URL.href).then(
    (m: BuiltValidators) => m,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ERR_MODULE_NOT_FOUND') return undefined;
      throw error;
    },
  );
  return built;
}

/** Loaded once when the module is: a validator is asked for synchronously, in the middle of a load. */
const loaded = await builtValidators();
const compiledHere = new Map<ValidatorName, ValidateFunction>();

/** The built validator of `name`, else `compile()`'s, compiled once. */
export function validatorOf(name: ValidatorName, compile: () => ValidateFunction): ValidateFunction {
  const fn = loaded?.[validatorExport(name)];
  if (typeof fn === 'function') return fn;
  let own = compiledHere.get(name);
  if (!own) compiledHere.set(name, (own = compile()));
  return own;
}
