import { zoneProblem } from '../util/time-window.js';
import { dirname } from 'node:path';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { TEMPLATE_NAMES, type WithBlock } from '../actions/action.js';
import { takesTarget } from '../actions/action.js';
import { ACTIONS, guardable, verifiable } from '../actions/index.js';
import { resolveHealth, type HealthInput } from '../health/spec.js';
import { InvalidInputError, type InputProblem } from '../errors.js';
import { ajvProblems, createAjv } from '../util/ajv.js';
import { validatorOf } from '../util/validators.js';
import { PlaybookFiles, readInputFile } from '../util/input-file.js';
import { parseRate } from '../util/rate.js';
import { isUuid } from '../util/uuid.js';
import { playbookSchema } from './schema.js';
import { channelProblems } from './channels.js';
import type { Playbook, Task } from './types.js';

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export interface LoadOptions {
  /** Where `${VAR}` references are looked up: the command's environment (cli/io.ts). */
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

export function parsePlaybook(text: string, file: string, options: LoadOptions): Playbook {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  const locate = (path: string) => {
    const offset = offsetOf(doc, path ? path.split('.') : []);
    const pos = lineCounter.linePos(offset);
    return { line: pos.line, column: pos.col };
  };
  const at = (p: InputProblem): InputProblem => (p.file ? p : { file, ...locate(p.path), ...p });

  if (doc.errors.length > 0) {
    throw new InvalidInputError(
      doc.errors.map((e) => {
        const pos = lineCounter.linePos(e.pos[0]);
        return { file, line: pos.line, column: pos.col, path: '', message: `YAML: ${e.message.split('\n')[0]}` };
      }),
    );
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    // yaml refuses documents whose aliases expand past the limit (a "billion laughs" alias bomb).
    throw new InvalidInputError([{ file, line: 1, column: 1, path: '', message: `YAML: ${(error as Error).message.split('\n')[0]}` }]);
  }
  const validateSchema = validatorOf('playbook', () => createAjv().compile(playbookSchema()));
  if (!validateSchema(raw)) throw new InvalidInputError(ajvProblems(validateSchema.errors).map(at));

  const data = raw as {
    name: string;
    company?: string;
    settings?: Playbook['settings'];
    targets?: Playbook['targets'];
    sites?: Record<string, string>;
    tasks: (Omit<Task, 'index' | 'allow_empty' | 'health'> & { allow_empty?: boolean; health?: true | HealthInput })[];
  };
  const problems: InputProblem[] = [];
  const warnings: InputProblem[] = [];
  const unset = (path: string, name: string) => (options.requireEnv ? problems : warnings).push({ path, message: `environment variable ${name} is not set` });
  const { env } = options;
  const files = new PlaybookFiles(dirname(file), [...(options.allowOutside ?? []), ...(data.settings?.allowed_files ?? [])]);

  const resolveRefs = (value: unknown, path: string, secretPaths: Set<string>): unknown => {
    if (typeof value === 'string') {
      if (secretPaths.has(path)) {
        const name = value.slice(2, -1);
        if (env[name] === undefined) unset(path, name);
        return value; // resolved only when the call is sent, so it never reaches a plan or report
      }
      return value.replace(ENV_REF, (whole, name: string) => {
        const v = env[name];
        if (v === undefined) {
          unset(path, name);
          return whole;
        }
        return v;
      });
    }
    if (Array.isArray(value)) return value.map((v, i) => resolveRefs(v, `${path}.${i}`, secretPaths));
    if (typeof value === 'object' && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveRefs(v, path ? `${path}.${k}` : k, secretPaths)]));
    }
    return value;
  };

  let company = options.company ?? (data.company === undefined ? undefined : (resolveRefs(data.company, 'company', new Set()) as string));
  if (company !== undefined && !company.includes('${') && !isUuid(company)) {
    problems.push({ path: 'company', message: `${JSON.stringify(company)} is not a company UUID` });
  }
  if (company?.includes('${')) company = undefined; // unset variable: already reported when it matters

  const targets = data.targets ?? {};
  const names = new Map<string, number>();
  const tasks: Task[] = data.tasks.map((t, index) => {
    const action = ACTIONS.get(t.action)!;
    const path = `tasks.${index}`;
    if (names.has(t.name))
      problems.push({
        path: `${path}.name`,
        message: `another task (tasks.${names.get(t.name)}) has the name ${JSON.stringify(t.name)}; names identify tasks in reports`,
      });
    names.set(t.name, index);
    const targeting = takesTarget(action);
    if (action.scope === 'site') {
      const w = (t.with ?? {}) as Record<string, unknown>;
      const names = Object.keys(w).filter((k) => k.endsWith('_environment'));
      if (t.target === undefined && w.site_id === undefined)
        problems.push({
          path: `${path}.with`,
          message: `${action.name} needs with.site_id, or a target (one call per selected site; site ids from sites: or --sites)`,
        });
      else if (t.target !== undefined && w.site_id !== undefined)
        problems.push({ path: `${path}.with.site_id`, message: 'give with.site_id or a target, not both: a target acts on every selected site' });
      else if (t.target === undefined && names.length > 0)
        problems.push({
          path: `${path}.with.${names[0]}`,
          message: `${names[0]} names an environment of each targeted site: it needs a target (with site_id, give the id)`,
        });
    }
    if (targeting === 'required' || (targeting === 'optional' && t.target !== undefined)) {
      if (t.target === undefined)
        problems.push({ path: `${path}.action`, message: `${action.name} needs a target: "all", a name under targets, or a selector` });
      else if (typeof t.target === 'string' && t.target !== 'all' && !(t.target in targets)) {
        const known = Object.keys(targets);
        problems.push({
          path: `${path}.target`,
          message: `no target named ${JSON.stringify(t.target)} (${known.length ? `defined: ${known.join(', ')}` : 'none defined under targets'}; "all" selects every environment)`,
        });
      }
    } else if (t.target !== undefined) {
      problems.push({ path: `${path}.target`, message: `${action.name} acts once, on the ids under with:, and takes no target` });
    }
    const secretPaths = new Set((action.secretFields ?? []).map((f) => `${path}.with.${f}`));
    let withBlock = resolveRefs(t.with ?? {}, `${path}.with`, secretPaths) as WithBlock; // the schema checked it is an object
    problems.push(...unknownTemplates(withBlock, `${path}.with`));
    const checked = action.check?.(withBlock, files) ?? [];
    problems.push(...checked.map((p) => ({ ...p, path: `${path}.with.${p.path}` })));
    if (checked.length === 0 && action.prepare) withBlock = action.prepare(withBlock, files);
    warnings.push(...(action.advise?.(withBlock) ?? []).map((p) => ({ ...p, path: `${path}.with.${p.path}` })));
    if (t.verify && !action.verify) problems.push({ path: `${path}.verify`, message: `verify is offered for ${verifiable().join(', ')} only` });
    const guards = guardable().includes(action.name);
    for (const key of ['health', 'backup_first'] as const)
      if (t[key] !== undefined && t[key] !== false && !guards)
        problems.push({ path: `${path}.${key}`, message: `${key} guards actions that change an environment: ${guardable().join(', ')}` });
    const health = t.health === undefined || !guards ? undefined : resolveHealth(t.health);
    problems.push(...(health?.problems ?? []).map((p) => ({ ...p, path: `${path}.health.${p.path}` })));
    if (health?.spec?.on_broken === 'restore' && !t.backup_first)
      problems.push({
        path: `${path}.health.on_broken`,
        message: 'restore needs backup_first: true (a site is restored only from the backup this run took before its write)',
      });
    const waves = t.rollout?.waves ?? [];
    const shares = waves.map((w) => Number(w.replace('%', '')));
    if (shares.some((v, i) => i > 0 && v <= shares[i - 1]!))
      problems.push({ path: `${path}.rollout.waves`, message: 'wave shares must grow, e.g. ["10%", "50%", "100%"]' });
    else if (shares.length > 0 && shares.at(-1) !== 100)
      problems.push({ path: `${path}.rollout.waves`, message: 'the last wave must be "100%", or some targets would never be reached' });
    return {
      index,
      name: t.name,
      action: t.action,
      target: t.target,
      with: withBlock,
      allow_empty: t.allow_empty ?? false,
      max_failures: t.max_failures,
      wait: t.wait,
      timeout: t.timeout,
      rollout: t.rollout,
      verify: t.verify,
      ...(health?.spec ? { health: health.spec } : {}),
      ...(t.backup_first ? { backup_first: true } : {}),
    };
  });

  for (const key of ['rate_limit', 'create_rate_limit'] as const) {
    const rate = data.settings?.[key];
    if (rate === undefined) continue;
    try {
      parseRate(rate);
    } catch (error) {
      problems.push({ path: `settings.${key}`, message: (error as Error).message });
    }
  }
  const window = data.settings?.window;
  const zone = window?.timezone === undefined ? undefined : zoneProblem(window.timezone);
  if (zone) problems.push({ path: 'settings.window.timezone', message: zone });
  if (window && window.start === window.end) problems.push({ path: 'settings.window.end', message: `the window ${window.start}–${window.end} is empty` });
  problems.push(...channelProblems(data.settings, env, unset));
  if (problems.length > 0) throw new InvalidInputError(problems.map(at));
  if (warnings.length > 0) options.onWarning?.(warnings.map(at));
  return { file, name: data.name, company, settings: data.settings ?? {}, targets, sites: data.sites ?? {}, tasks, locate };
}

/** `{{envv}}` would be sent as it stands: a typo in a template name is an error, not a literal. */
function unknownTemplates(value: unknown, path: string): InputProblem[] {
  if (typeof value === 'string') {
    return [...value.matchAll(/\{\{\s*([^}\s]*)\s*\}\}/g)]
      .filter((m) => !TEMPLATE_NAMES.includes(m[1]!))
      .map((m) => ({ path, message: `unknown template ${m[0]}; known: ${TEMPLATE_NAMES.map((n) => `{{${n}}}`).join(', ')}` }));
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => unknownTemplates(v, `${path}.${i}`));
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([k, v]) => unknownTemplates(v, `${path}.${k}`));
  return [];
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
