import { takesTarget, TEMPLATE_NAMES, type Action, type WithBlock } from '../actions/action.js';
import { ACTIONS, guardable, itemActions, verifiable } from '../actions/index.js';
import type { InputProblem } from '../errors.js';
import { resolveHealth, type HealthInput } from '../health/spec.js';
import type { PlaybookFiles } from '../util/input-file.js';
import type { Playbook, Task } from './types.js';

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** A task as the schema checked it, before its checks and `${VAR}`s. */
export type RawTask = Omit<Task, 'index' | 'allow_empty' | 'health'> & { allow_empty?: boolean; health?: true | HealthInput };

/** The problems (errors) and warnings found while a playbook is read; an unset `${VAR}` is one or the other. */
export class Findings {
  readonly problems: InputProblem[] = [];
  readonly warnings: InputProblem[] = [];
  constructor(private readonly options: { requireEnv?: boolean }) {}
  readonly unset = (path: string, name: string) =>
    void (this.options.requireEnv ? this.problems : this.warnings).push({ path, message: `environment variable ${name} is not set` });
}

/**
 * `${VAR}` references filled from the command's environment, where the playbook's own text wrote
 * them. A secret field keeps its reference: it is resolved only when the call is sent, so a secret
 * never reaches a plan or a report.
 */
export class RefResolver {
  constructor(
    private readonly env: Record<string, string | undefined>,
    private readonly found: Findings,
  ) {}

  resolve(value: unknown, path: string, secretPaths: Set<string>): unknown {
    if (typeof value === 'string') return this.#text(value, path, secretPaths.has(path));
    if (Array.isArray(value)) return value.map((v, i) => this.resolve(v, `${path}.${i}`, secretPaths));
    if (typeof value === 'object' && value !== null)
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.resolve(v, path ? `${path}.${k}` : k, secretPaths)]));
    return value;
  }

  #text(value: string, path: string, secret: boolean): string {
    if (secret) {
      const name = value.slice(2, -1);
      if (this.env[name] === undefined) this.found.unset(path, name);
      return value;
    }
    return value.replace(ENV_REF, (whole, name: string) => {
      const v = this.env[name];
      if (v === undefined) this.found.unset(path, name);
      return v ?? whole;
    });
  }
}

/** What checking a task needs of the playbook around it. */
export interface TaskCheckContext {
  targets: Playbook['targets'];
  files: PlaybookFiles;
  refs: RefResolver;
  found: Findings;
  /** Every task, for names that must be unique. */
  tasks: readonly RawTask[];
}

/** One task checked (target, `with`, guards, rollout) and made ready to plan; its problems go to `ctx.found`. */
export function checkTask(t: RawTask, index: number, ctx: TaskCheckContext): Task {
  const action = ACTIONS.get(t.action)!;
  const path = `tasks.${index}`;
  const problems = ctx.found.problems;
  const first = ctx.tasks.findIndex((other) => other.name === t.name);
  if (first < index)
    problems.push({ path: `${path}.name`, message: `another task (tasks.${first}) has the name ${JSON.stringify(t.name)}; names identify tasks in reports` });
  problems.push(...siteProblems(action, t, path), ...targetProblems(action, t, path, ctx.targets));
  const withBlock = checkedWith(action, t, path, ctx);
  if (t.verify && !action.verify) problems.push({ path: `${path}.verify`, message: `verify is offered for ${verifiable().join(', ')} only` });
  const health = guardOf(action, t, path, problems);
  problems.push(...waveProblems(t, path), ...stagingProblems(t, path), ...togetherProblems(t, index, ctx.tasks));
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
    ...(health ? { health } : {}),
    ...(t.backup_first ? { backup_first: t.backup_first } : {}),
  };
}

/** A site action acts on with.site_id or on a target's sites, one or the other; environment names need a target. */
function siteProblems(action: Action, t: RawTask, path: string): InputProblem[] {
  if (action.scope !== 'site') return [];
  const w = (t.with ?? {}) as Record<string, unknown>;
  const names = Object.keys(w).filter((k) => k.endsWith('_environment'));
  if (t.target === undefined && w.site_id === undefined)
    return [{ path: `${path}.with`, message: `${action.name} needs with.site_id, or a target (one call per selected site; site ids from sites: or --sites)` }];
  if (t.target !== undefined && w.site_id !== undefined)
    return [{ path: `${path}.with.site_id`, message: 'give with.site_id or a target, not both: a target acts on every selected site' }];
  if (t.target === undefined && names.length > 0)
    return [
      { path: `${path}.with.${names[0]}`, message: `${names[0]} names an environment of each targeted site: it needs a target (with site_id, give the id)` },
    ];
  return [];
}

/** A target where the action takes one, naming a target set that exists; none where it acts once. */
function targetProblems(action: Action, t: RawTask, path: string, targets: Playbook['targets']): InputProblem[] {
  const targeting = takesTarget(action);
  if (targeting === 'never' || (targeting === 'optional' && t.target === undefined))
    return t.target === undefined ? [] : [{ path: `${path}.target`, message: `${action.name} acts once, on the ids under with:, and takes no target` }];
  if (t.target === undefined) return [{ path: `${path}.action`, message: `${action.name} needs a target: "all", a name under targets, or a selector` }];
  if (typeof t.target !== 'string' || t.target === 'all' || t.target in targets) return [];
  const known = Object.keys(targets);
  return [
    {
      path: `${path}.target`,
      message: `no target named ${JSON.stringify(t.target)} (${known.length ? `defined: ${known.join(', ')}` : 'none defined under targets'}; "all" selects every environment)`,
    },
  ];
}

/** The `with:` block with its `${VAR}`s filled (secrets kept as references), checked, prepared and advised on by its action. */
function checkedWith(action: Action, t: RawTask, path: string, ctx: TaskCheckContext): WithBlock {
  const { problems, warnings } = ctx.found;
  const secretPaths = new Set((action.secretFields ?? []).map((f) => `${path}.with.${f}`));
  let withBlock = ctx.refs.resolve(t.with ?? {}, `${path}.with`, secretPaths) as WithBlock; // the schema checked it is an object
  problems.push(...unknownTemplates(withBlock, `${path}.with`));
  const checked = action.check?.(withBlock, ctx.files) ?? [];
  problems.push(...checked.map((p) => ({ ...p, path: `${path}.with.${p.path}` })));
  if (checked.length === 0 && action.prepare) withBlock = action.prepare(withBlock, ctx.files);
  warnings.push(...(action.advise?.(withBlock) ?? []).map((p) => ({ ...p, path: `${path}.with.${p.path}` })));
  return withBlock;
}

/** `health:` and `backup_first` guard only actions that change an environment; a restore needs the run's own backup. */
function guardOf(action: Action, t: RawTask, path: string, problems: InputProblem[]): Task['health'] {
  const guards = guardable().includes(action.name);
  for (const key of ['health', 'backup_first'] as const)
    if (t[key] !== undefined && t[key] !== false && !guards)
      problems.push({ path: `${path}.${key}`, message: `${key} guards actions that change an environment: ${guardable().join(', ')}` });
  const health = t.health === undefined || !guards ? undefined : resolveHealth(t.health);
  problems.push(...(health?.problems ?? []).map((p) => ({ ...p, path: `${path}.health.${p.path}` })));
  const onBroken = health?.spec?.on_broken;
  if (onBroken && !t.backup_first)
    problems.push({
      path: `${path}.health.on_broken`,
      message: `${onBroken} needs backup_first: true (a site is restored only from the backup this run took before its write)`,
    });
  // Putting back by items is how on_broken: restore puts a site back; an item update has items to put back.
  if (health?.spec?.undo === 'items_first' && ((onBroken !== 'restore' && onBroken !== 'isolate') || action.items === undefined))
    problems.push({
      path: `${path}.health.undo`,
      message: `items_first puts back the items a write replaced before any restore: it needs on_broken: restore or isolate on an item update (${itemActions().join(', ')})`,
    });
  // Isolation takes a write apart by the items it updates: only an item update has any.
  if (onBroken === 'isolate' && action.items === undefined)
    problems.push({
      path: `${path}.health.on_broken`,
      message: `isolate finds which update of a write broke its site: it takes an item update (${itemActions().join(', ')}), not ${action.name}`,
    });
  return health?.spec;
}

/** Staging first reruns a theme update on staging; its settings mean nothing without it. */
function stagingProblems(t: RawTask, path: string): InputProblem[] {
  const r = t.rollout ?? {};
  if (!r.staging_first) {
    const stray = (['soak', 'no_staging', 'staging', 'security_bypass'] as const).find((k) => r[k] !== undefined);
    return stray ? [{ path: `${path}.rollout.${stray}`, message: `goes with rollout.staging_first: true` }] : [];
  }
  if (!ACTIONS.get(t.action)?.stagesFirst)
    return [{ path: `${path}.rollout.staging_first`, message: `staging first reruns an update on staging, then on live: ${stagers()} take it` }];
  return [];
}

/**
 * `rollout.together` names an earlier task that updates another kind of item and guards its writes
 * (a backup, a look): this task's writes join that task's turn on each environment both write to, so
 * it takes that task's guards and rollout, and nothing of its own that would disagree with them.
 * One task of each kind at most joins a task.
 */
function togetherProblems(t: RawTask, index: number, tasks: readonly RawTask[]): InputProblem[] {
  const name = t.rollout?.together;
  if (name === undefined) return [];
  const at = `tasks.${index}.rollout.together`;
  const partner = tasks.findIndex((other) => other.name === name);
  const kind = ACTIONS.get(t.action)?.items;
  const other = partner >= 0 ? ACTIONS.get(tasks[partner]!.action)?.items : undefined;
  if (partner < 0 || partner >= index)
    return [{ path: at, message: `names no earlier task: ${JSON.stringify(name)} (the task this one joins must come first in the playbook)` }];
  if (!kind || !other || kind === other)
    return [{ path: at, message: `joins an update of another kind of item (${stagers()}): ${t.action} cannot join ${tasks[partner]!.action}` }];
  const own = (['health', 'backup_first'] as const).find((k) => t[k] !== undefined && t[k] !== false);
  if (own) return [{ path: `tasks.${index}.${own}`, message: `this task takes the ${own} of "${name}" (rollout.together): give it there only` }];
  const stray = (['canary', 'waves', 'pause', 'staging_first'] as const).find((k) => t.rollout?.[k] !== undefined);
  if (stray)
    return [{ path: `tasks.${index}.rollout.${stray}`, message: `this task's writes go in the turn of "${name}" (rollout.together): give ${stray} there` }];
  const p = tasks[partner]!;
  if (p.rollout?.staging_first) return [{ path: at, message: `"${name}" goes through staging first, which rollout.together does not join` }];
  if (!p.backup_first && p.health === undefined)
    return [{ path: at, message: `"${name}" takes no backup and looks at no page (backup_first, health): there is nothing to share` }];
  const joined = tasks.findIndex((other, i) => i !== index && other.rollout?.together === name && ACTIONS.get(other.action)?.items === kind);
  if (joined >= 0 && joined < index) return [{ path: at, message: `tasks.${joined} already joins "${name}" with the same kind of item` }];
  return [];
}

/** The actions staging first may rerun on staging: the playbook names them, this module does not. */
function stagers(): string {
  return [...ACTIONS.values()]
    .filter((a) => a.stagesFirst)
    .map((a) => a.name)
    .join(', ');
}

/** A rollout's wave shares grow, and the last reaches every target. */
function waveProblems(t: RawTask, path: string): InputProblem[] {
  const shares = (t.rollout?.waves ?? []).map((w) => Number(w.replace('%', '')));
  if (shares.some((v, i) => i > 0 && v <= shares[i - 1]!))
    return [{ path: `${path}.rollout.waves`, message: 'wave shares must grow, e.g. ["10%", "50%", "100%"]' }];
  if (shares.length > 0 && shares.at(-1) !== 100)
    return [{ path: `${path}.rollout.waves`, message: 'the last wave must be "100%", or some targets would never be reached' }];
  return [];
}

/** `{{envv}}` would be sent as it stands: a typo in a template name is an error, not a literal. */
export function unknownTemplates(value: unknown, path: string): InputProblem[] {
  if (typeof value === 'string') {
    return [...value.matchAll(/\{\{\s*([^}\s]*)\s*\}\}/g)]
      .filter((m) => !TEMPLATE_NAMES.includes(m[1]!))
      .map((m) => ({ path, message: `unknown template ${m[0]}; known: ${TEMPLATE_NAMES.map((n) => `{{${n}}}`).join(', ')}` }));
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => unknownTemplates(v, `${path}.${i}`));
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([k, v]) => unknownTemplates(v, `${path}.${k}`));
  return [];
}
