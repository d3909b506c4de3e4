import { readFileSync } from 'node:fs';
import type { ValidateFunction } from 'ajv';
import { InvalidInputError, UsageError, type InputProblem } from '../errors.js';
import { ajvProblems, createAjv } from './ajv.js';
import { validatorOf } from './validators.js';
import { InputFileError, readInputFile } from './input-file.js';

/**
 * The one way sitefleet reads back a JSON file it wrote (a saved plan, a report, a journal's lines):
 * as data from a folder others may write. A file that is not what it claims ends in one line naming
 * the file, its line and the field, exit 2, before any of it is used: never a stack trace, never a
 * quote of its text.
 */

/** Plans and reports nest a dozen levels; deeper is not ours, and a million levels would overflow every walk over it. */
export const MAX_JSON_DEPTH = 64;

/**
 * The schemas of what is read back, by file name in `schemas/`. `records.schema.json` holds what more
 * than one of them records (a step's result, release-age and staging decisions): one schema for the
 * writer and every reader, never a copy per file.
 */
export type ReadBackSchema = 'plan.schema.json' | 'report.schema.json' | 'journal-record.schema.json' | 'records.schema.json';

/** The read-back schemas, by file name, as written. */
export const READ_BACK_SCHEMAS: ReadBackSchema[] = ['records.schema.json', 'plan.schema.json', 'report.schema.json', 'journal-record.schema.json'];

export function readBackSchema(name: ReadBackSchema): object {
  return JSON.parse(readFileSync(new URL(`../../schemas/${name}`, import.meta.url), 'utf8')) as object;
}

/** Built with the CLI, or compiled once on first use: commands that read nothing back never pay for it. */
export function readBackValidator(name: ReadBackSchema): ValidateFunction {
  return validatorOf(name, () => {
    const ajv = createAjv();
    for (const n of READ_BACK_SCHEMAS) ajv.addSchema(readBackSchema(n), n);
    return ajv.getSchema(name)!;
  });
}

/**
 * Parses `text` (or throws the problem located at its line): empty text, nesting deeper than
 * MAX_JSON_DEPTH (found by a scan, before JSON.parse builds anything), and text that is not JSON.
 */
export function parseJsonText(text: string, what: string): unknown {
  if (text.trim() === '') throw new JsonProblem(1, `empty: not a ${what}`);
  const deep = depthExceededAt(text, MAX_JSON_DEPTH);
  if (deep !== undefined) throw new JsonProblem(lineAt(text, deep), `nested deeper than ${MAX_JSON_DEPTH} levels: not a ${what}`);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const at = /position (\d+)/.exec((error as Error).message)?.[1];
    throw new JsonProblem(at === undefined ? 1 : lineAt(text, Number(at)), `not JSON: not a ${what}`);
  }
}

/** A problem at a line of the text being parsed; the caller names the file. */
export class JsonProblem extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Reads a JSON file sitefleet wrote, checks it against its schema, and returns it with its text.
 * `locate` turns a field's path into its line (only called when something is wrong).
 */
export function readJsonFile(
  file: string,
  options: { what: string; maxBytes: number; schema: ReadBackSchema; locate?: (text: string) => (path: string) => { line: number; column: number } },
): { data: unknown; text: string } {
  let text: string;
  try {
    text = readInputFile(file, options.maxBytes);
  } catch (error) {
    if (error instanceof InputFileError) throw new UsageError(`the ${options.what}: ${error.message}`);
    throw error;
  }
  let data: unknown;
  try {
    data = parseJsonText(text, options.what);
  } catch (error) {
    if (error instanceof JsonProblem) throw new InvalidInputError([{ file, line: error.line, path: '', message: error.message }]);
    throw error;
  }
  const validate = readBackValidator(options.schema);
  if (!validate(data)) {
    const locate = options.locate?.(text);
    throw new InvalidInputError(firstProblems(validate, options.what).map((p) => ({ file, ...(locate?.(p.path) ?? { line: 1 }), ...p })));
  }
  return { data, text };
}

/** The schema's complaints, the first few: a file that is not ours fails everywhere, and one line says so. */
export function firstProblems(validate: ValidateFunction, what: string): InputProblem[] {
  const problems = ajvProblems(validate.errors);
  return problems
    .slice(0, 1)
    .map((p) => ({ ...p, message: `${p.message} (not a ${what} sitefleet wrote${problems.length > 1 ? `; ${problems.length - 1} more problems` : ''})` }));
}

/** The offset where nesting first goes deeper than `max`, outside strings; undefined when it never does. */
export function depthExceededAt(text: string, max: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return i;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return undefined;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 0x0a) line++;
  return line;
}
