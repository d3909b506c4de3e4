import { zoneProblem } from '../util/time-window.js';
import { dirname } from 'node:path';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { InvalidInputError, type InputProblem } from '../errors.js';
import { ajvProblems, createAjv } from '../util/ajv.js';
import { validatorOf } from '../util/validators.js';
import { PlaybookFiles, readInputFile } from '../util/input-file.js';
import { parseRate } from '../util/rate.js';
import { isUuid } from '../util/uuid.js';
import { playbookSchema } from './schema.js';
import { checkTask, Findings, RefResolver, type RawTask } from './task-check.js';
import { channelProblems } from './channels.js';
import type { Playbook } from './types.js';

export interface LoadOptions {
  /** Where `${VAR}` references are looked up: the command's environment (app/io.ts). */
  env: Record<string, string | undefined>;
  /** `${VAR}` references to unset variables are errors (plan and run); otherwise warnings (`validate`, whose CI may lack them). */
  requireEnv?: boolean;
  /** Receives the warnings, located, once the playbook is otherwise valid. */
  onWarning?(warnings: InputProblem[]): void;
  /** `--company`: overrides the playbook's company. */
  company?: string;
  /** `--allow-outside FILE`: files outside the playbook's folder it may name (besides `settings.allowed_files`). */
  allowOutside?: string[];
}

/** Reads, parses and validates a playbook file. Throws InvalidInputError listing every problem. */
export function loadPlaybook(file: string, options: LoadOptions): Playbook {
  let text: string;
  try {
    text = readInputFile(file, MAX_PLAYBOOK_BYTES);
  } catch (error) {
    throw new InvalidInputError([{ file, line: 1, column: 1, path: '', message: `cannot read the playbook: ${(error as Error).message}` }]);
  }
  return parsePlaybook(text, file, options);
}

/** A playbook is a page or two of YAML; a megabyte is far past any real one, and far below what hurts. */
export const MAX_PLAYBOOK_BYTES = 1 << 20;

/** The playbook as the schema checked it: its tasks before their checks and `${VAR}`s. */
interface RawPlaybook {
  name: string;
  company?: string;
  settings?: Playbook['settings'];
  targets?: Playbook['targets'];
  sites?: Record<string, string>;
  tasks: RawTask[];
}

export function parsePlaybook(text: string, file: string, options: LoadOptions): Playbook {
  const { raw, locate } = readYaml(text, file);
  const at = (p: InputProblem): InputProblem => (p.file ? p : { file, ...locate(p.path), ...p });
  const validateSchema = validatorOf('playbook', () => createAjv().compile(playbookSchema()));
  if (!validateSchema(raw)) throw new InvalidInputError(ajvProblems(validateSchema.errors).map(at));
  const data = raw as RawPlaybook; // the schema checked it
  const found = new Findings(options);
  const refs = new RefResolver(options.env, found);
  const company = companyOf(data, options, refs, found);
  const targets = data.targets ?? {};
  const files = new PlaybookFiles(dirname(file), [...(options.allowOutside ?? []), ...(data.settings?.allowed_files ?? [])]);
  const tasks = data.tasks.map((t, index) => checkTask(t, index, { targets, files, refs, found, tasks: data.tasks }));
  found.problems.push(...settingsProblems(data.settings, options.env, found.unset));
  if (found.problems.length > 0) throw new InvalidInputError(found.problems.map(at));
  if (found.warnings.length > 0) options.onWarning?.(found.warnings.map(at));
  return { file, name: data.name, company, settings: data.settings ?? {}, targets, sites: data.sites ?? {}, tasks, locate };
}

/** Parses the YAML with the position of every node; a YAML error or an alias bomb is the file's problem, located. */
function readYaml(text: string, file: string): { raw: unknown; locate: Playbook['locate'] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  const locate = (path: string) => {
    const pos = lineCounter.linePos(offsetOf(doc, path ? path.split('.') : []));
    return { line: pos.line, column: pos.col };
  };
  if (doc.errors.length > 0) {
    throw new InvalidInputError(
      doc.errors.map((e) => {
        const pos = lineCounter.linePos(e.pos[0]);
        return { file, line: pos.line, column: pos.col, path: '', message: `YAML: ${e.message.split('\n')[0]}` };
      }),
    );
  }
  try {
    return { raw: doc.toJS({ maxAliasCount: 100 }), locate };
  } catch (error) {
    // yaml refuses documents whose aliases expand past the limit (a "billion laughs" alias bomb).
    throw new InvalidInputError([{ file, line: 1, column: 1, path: '', message: `YAML: ${(error as Error).message.split('\n')[0]}` }]);
  }
}

/** The company: `--company`, else the playbook's (its `${VAR}` resolved); a value that is no UUID is a problem. */
function companyOf(data: RawPlaybook, options: LoadOptions, refs: RefResolver, found: Findings): string | undefined {
  const company = options.company ?? (data.company === undefined ? undefined : (refs.resolve(data.company, 'company', new Set()) as string));
  if (company !== undefined && !company.includes('${') && !isUuid(company))
    found.problems.push({ path: 'company', message: `${JSON.stringify(company)} is not a company UUID` });
  return company?.includes('${') ? undefined : company; // unset variable: already reported when it matters
}

/** Settings a schema cannot check: rates that parse, a window's time zone and length, the channels' `${VAR}`s. */
function settingsProblems(settings: Playbook['settings'] | undefined, env: LoadOptions['env'], unset: Findings['unset']): InputProblem[] {
  const problems: InputProblem[] = [];
  for (const key of ['rate_limit', 'create_rate_limit'] as const) {
    const rate = settings?.[key];
    if (rate === undefined) continue;
    try {
      parseRate(rate);
    } catch (error) {
      problems.push({ path: `settings.${key}`, message: (error as Error).message });
    }
  }
  const window = settings?.window;
  const zone = window?.timezone === undefined ? undefined : zoneProblem(window.timezone);
  if (zone) problems.push({ path: 'settings.window.timezone', message: zone });
  if (window && window.start === window.end) problems.push({ path: 'settings.window.end', message: `the window ${window.start}–${window.end} is empty` });
  problems.push(...channelProblems(settings, env, unset));
  return problems;
}

/** Source offset of the node at `path`; for a path that ends in a missing key, its parent's. */
/** Where a dotted field path sits in a YAML (or JSON) text: for problems found in a file that is not a playbook, such as a saved plan. */
export function textLocator(text: string): (path: string) => { line: number; column: number } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  return (path) => {
    const pos = lineCounter.linePos(offsetOf(doc, path ? path.split('.') : []));
    return { line: pos.line, column: pos.col };
  };
}

function offsetOf(doc: Document, path: string[]): number {
  let node: unknown = doc.contents;
  let offset = (node as Node | null)?.range?.[0] ?? 0;
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === segment);
      if (!pair) break;
      // The value when there is one (errors are mostly about values), else the key.
      offset = (pair.value as Node | null)?.range?.[0] ?? (pair.key as Node).range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node)) {
      const item = node.items[Number(segment)] as Node | undefined;
      if (!item) break;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else {
      break;
    }
  }
  return offset;
}
