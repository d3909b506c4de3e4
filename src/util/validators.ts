import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ValidateFunction } from 'ajv';
import * as runtime from './ajv-runtime.js';
import { cachedScript } from './cached-script.js';

/**
 * The validators, compiled at build time when the CLI was built (`npm run build` writes
 * dist/generated/validators/ from the schemas: scripts/build-validators.mjs), else at run time.
 * Compiling the playbook schema alone costs ~150 ms of ajv code generation, which every `validate`
 * and `run` would pay at start-up; loading every built validator costs most of that again (1.6 MB of
 * code, the read-back schemas' most of it), so each is a file of its own, loaded when first asked for.
 * Run from the sources (the tests), nothing is built: the schemas are compiled as before, by the same
 * ajv setup, and test/validators.test.ts holds the two equal.
 */

/** The name of a validator: `playbook`, `api/<schema name>`, or a read-back schema's file name. */
export type ValidatorName = string;

/** What the build writes beside the validators (index.json): their names, and the hash of the schemas they were made from. */
export interface BuiltIndex {
  schemas_sha256: string;
  validators: ValidatorName[];
}

/** Where the build writes the validators, from both `src/util/` (none there) and `dist/util/`. */
export const BUILT_DIR = new URL('../generated/validators/', import.meta.url);

/** `api/add-domain` → `api_add_domain`: a name fit for a file or an export. */
export function validatorExport(name: ValidatorName): string {
  return name.replace(/[^A-Za-z0-9]/g, '_');
}

/** The file the build writes a validator to, in BUILT_DIR. */
export function builtFile(name: ValidatorName): string {
  return `${validatorExport(name)}.cjs`;
}

/** A built validator's file, compiled (not yet run), and the function that makes the validator. */
export interface BuiltScript {
  make(): ValidateFunction;
  /** Writes V8's cache of it beside the file (the build's step: cachedScript). */
  keep(): void;
}

/**
 * A validator's file compiled with V8's code cache the build wrote beside it (cachedScript; made once
 * the validator had run: scripts/build-validators.mjs). The playbook's validator is one function of
 * 250 kB that V8 would otherwise compile at its first call, ~60 ms of every `validate`.
 */
export function builtScript(file: string): BuiltScript {
  const { load, keep } = cachedScript(file);
  return { keep, make: () => (load() as (sitefleet: typeof runtime) => ValidateFunction)(runtime) };
}

/** The validator of `name` built with the CLI, or undefined when there is none (run from the sources). */
export function builtValidator(name: ValidatorName, dir: URL = BUILT_DIR): ValidateFunction | undefined {
  const file = fileURLToPath(new URL(builtFile(name), dir));
  if (!existsSync(file)) return undefined;
  return builtScript(file).make();
}

const known = new Map<ValidatorName, ValidateFunction>();

/** The built validator of `name`, else `compile()`'s, either made once. */
export function validatorOf(name: ValidatorName, compile: () => ValidateFunction): ValidateFunction {
  let fn = known.get(name);
  if (!fn) known.set(name, (fn = builtValidator(name) ?? compile()));
  return fn;
}
