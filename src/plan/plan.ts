import {
  fillSecrets,
  type Action,
  type EnvironmentAction,
  type ExpandContext,
  type Expansion,
  type ItemChange,
  type RequestSpec,
  type SiteAction,
  type Target,
} from '../actions/action.js';
import { ACTIONS, restorePoint } from '../actions/index.js';
import { healthUrl, usesDomain, type HealthSpec } from '../health/spec.js';
import { matchesAny } from '../util/glob.js';
import { ENDPOINTS, fillPath, type EndpointName } from '../api/endpoints.js';
import { bodyProblems } from '../api/request-schemas.js';
import { InvalidInputError, type InputProblem } from '../errors.js';
import { installedOf, type Environment, type InstalledItem, type Inventory } from '../inventory/inventory.js';
import { KIND_TABLE, nameOf, type Kind, OTHER_KINDS } from '../inventory/kinds.js';
import type { ReleaseAgeDecision, ReleaseClock } from '../inventory/release-age.js';
import type { WithheldDecision, Withholding } from '../inventory/withheld.js';
import type { Playbook, Task } from '../playbook/types.js';
import { parseDuration } from '../util/duration.js';
import { selectEnvironments } from './select.js';
import { releasesNeeded, stagingNeeded } from './needs.js';
import {
  judgeStaged,
  liveTakes,
  offering,
  soakedOn,
  StagingSites,
  towards,
  stagingWords,
  supersededSoak,
  mismatch,
  type StagingClock,
  type StagingDecision,
  type StagingJudgement,
} from './staging-first.js';
import { assignWaves } from './waves.js';
import { joinSteps, partnerOf, withPartnerGuards } from './together.js';

/** One API call the run will make. */
export interface Step {
  /** Unique within a plan: task index and target id. */
  id: string;
  task: string;
  task_index: number;
  action: string;
  target: Target;
  endpoint: EndpointName;
  method: string;
  path: string;
  params: Record<string, string>;
  body?: unknown;
  /** False for calls that create something: never sent twice once they may have reached the server. */
  idempotent: boolean;
  /** The environment this write occupies; writes to one environment never overlap. */
  lock?: string;
  note?: string;
  /** Rollout wave (0 = canary or first wave), for tasks with a rollout. */
  wave?: number;
  /** `backup`: the restore point a `backup_first` task takes before its write to this environment. */
  /** `backup`: a restore point; `staging`: a staging environment's run of the update live takes later (rollout.staging_first). */
  role?: 'backup' | 'staging';
  /** The write's restore point: the id of the backup step it waits for. */
  backup_step?: string;
  /** `rollout.together`: the index of the task whose turn this write goes in on its environment (plan/together.ts). */
  joins?: number;
  /**
   * One guard per environment: the id of the first of this task's pinned item writes to the
   * environment, which all share one look before, one cache clear and look after, one put-back, and
   * isolation over all their items (the run's look group; life/guard-group.ts). Absent on a lone write.
   */
  guard_group?: string;
  /** `health:`: the page checked before the write and after its operation, or why there is none (`on_missing_domain: fail`). */
  health?: { url: string } | { missing: string };
  /** What the listing showed that this call depends on (the action's words); a saved plan checks it again. */
  precondition?: string;
  /** Themes the release age held back on this environment (named in the note too) or sent early, with their dates. */
  release_age?: ReleaseAgeDecision[];
  /** Updates the company's history left alone on this environment (quarantined, retry_later, unreadable_record; named in the note too). */
  withheld?: WithheldDecision[];
  /** `health.on_broken: isolate`: the updates the write carries, with the versions they move between (what isolation takes apart). */
  updates?: ItemChange[];
  /** rollout.staging_first: what this step does of each theme's way through staging (staged, promoted). */
  staging?: StagingDecision[];
  /**
   * Set within a run only, never in a plan: the run's quarantine left updates out of this write
   * (run/run-quarantine.ts), so its body, `precondition` and `updates` are no longer the plan's; its
   * result keeps them (`sent`), for the report and for what the run records.
   */
  trimmed?: true;
}

/**
 * Whether the step is looked at with its environment's other writes: one guard per environment
 * (guard_group), or `rollout.together` (it joins a task, or one joins its).
 */
export function looksTogether(steps: readonly Step[], step: Step): boolean {
  return step.joins !== undefined || step.guard_group !== undefined || steps.some((s) => s.joins === step.task_index && s.target.env_id === step.target.env_id);
}

/** The guards (a look before and after, a cache clear) the writes given take: one a guard group (Step.guard_group), one a lone write. */
export function guardCount(writes: readonly Step[]): number {
  return new Set(writes.map((s) => s.guard_group ?? s.id)).size;
}

/** The page a guarded write's site is checked at, if it has one. */
export function stepHealthUrl(step: Pick<Step, 'health'>): string | undefined {
  return step.health && 'url' in step.health ? step.health.url : undefined;
}

export interface SkippedTarget {
  task: string;
  task_index: number;
  action: string;
  target: Target;
  reason: string;
  release_age?: ReleaseAgeDecision[];
  /** Updates the company's history left alone here: quarantined, retry_later, unreadable_record. */
  withheld?: WithheldDecision[];
  /** rollout.staging_first: why live waits (staged tonight, soaking, staging failed, no staging), with dates and override. */
  staging?: StagingDecision[];
}

export interface TaskSummary {
  index: number;
  name: string;
  action: string;
  /** Environments (or domains) the target selected. */
  matched: number;
  steps: number;
  skipped: number;
  allow_empty: boolean;
  max_failures?: number | string;
  /** Poll this task's operations to their end (a rollout implies it). */
  wait?: boolean;
  /** How long to wait for one operation, in ms. */
  timeout_ms?: number;
  verify?: boolean;
  rollout?: { canary: number; waves: string[]; pause_ms: number };
  health?: HealthSpec;
  /** The tag of the backup each environment gets before its write, and how many of the task's restore points judged healthy stay (default none). */
  backup_first?: { tag: string; keep?: number };
  /** A task that takes manual backups (its with.keep): the newest of its backups on an environment that stay. */
  keep_backups?: number;
  /** The plugins task's `with.after_update`: the item slugs whose own database step runs after a write updated them (life/database-step.ts). */
  after_update?: string[];
}

export interface Plan {
  version: 1;
  playbook: string;
  name: string;
  company: string;
  /** The date `{{date}}` stands for. */
  date: string;
  settings: Playbook['settings'];
  /**
   * What the plan was made from: environments, and items of each kind read (`themes`, `plugins`); a
   * kind read from each environment's own listing says why (`plugins_from_environments`).
   */
  inventory: { environments: number; themes: number; last_updated_at?: string } & Partial<Record<`${Plural}` | `${Plural}_from_environments`, number | string>>;
  tasks: TaskSummary[];
  steps: Step[];
  skipped: SkippedTarget[];
  /** When the plan was made, and from which playbook text: `run --plan` refuses a stale or foreign one. */
  made?: { at: string; playbook_sha256: string };
  /** `plan --out`: the API token's seal over the rest (util/seal.ts). */
  seal?: string;
}

export interface PlanInput {
  playbook: Playbook;
  inventory: Inventory;
  /** YYYY-MM-DD for `{{date}}`: the planner reads no clock. */
  date: string;
  /** Used only to check bodies whose secret fields hold `${VAR}` references; never copied into the plan. */
  env?: Record<string, string | undefined>;
  /**
   * The time release ages are judged at, and the first-seen table: needed when a task reads
   * `first_seen` (see releasesNeeded). Inputs, like `date`: the planner reads no clock and no store.
   */
  releases?: ReleaseClock;
  /** rollout.staging_first: the time staging is judged at and what the staging store holds (see stagingNeeded). */
  staging?: StagingClock;
  /**
   * The company's quarantine and retry tables and the time to judge them at (inventory/withheld.ts):
   * for item updates; without it nothing is withheld (validate, tests of other things).
   */
  withholding?: Withholding;
}

/**
 * A pure function of (playbook, inventory, date): no I/O, no clock, no randomness, so the same
 * inputs give the same plan byte for byte. Throws InvalidInputError when an expanded body breaks
 * the API's rules (a templated domain name that is not a domain name, say).
 */
export function buildPlan(input: PlanInput): Plan {
  const { playbook, inventory, date } = input;
  // Planned without it, a task would send every update whatever its age: a caller's mistake, said at once.
  if (input.releases === undefined && releasesNeeded(playbook, inventory)) throw new Error('a task judges release ages: the plan needs `releases`');
  if (input.staging === undefined && stagingNeeded(playbook)) throw new Error('a task goes through staging first: the plan needs `staging`');
  const company = playbook.company ?? inventory.company;
  const plan = new PlanParts(input, company);
  const tasks = playbook.tasks.map((task) => plan.task(task));
  if (plan.problems.length > 0) throw new InvalidInputError(dedupe(plan.problems).map((p) => ({ file: playbook.file, ...playbook.locate(p.path), ...p })));
  return {
    version: 1,
    playbook: playbook.file,
    name: playbook.name,
    company,
    date,
    settings: playbook.settings,
    inventory: inventorySummary(inventory),
    tasks,
    steps: plan.steps,
    skipped: plan.skipped,
  };
}

/** A live environment under staging first: its site's staging environment, and what its updates came to. */
interface StagedSite {
  env: Environment;
  staging: Environment | undefined;
  judged: StagingJudgement;
}

/** What staging first adds to an environment's steps: the staging step's role, and the decisions each carries out. */
type Mark = Pick<Step, 'role' | 'staging'>;

/** One task being planned: the task, its action, what it expands with, and its restore points' tag. */
interface TaskInPlan {
  task: Task;
  action: Action;
  /** The fleet as this task's `with:` offers it (`Action.offer`): the inventory itself for most. */
  inventory: Inventory;
  ctx: ExpandContext;
  backupTag?: string;
}

/** The steps, skipped targets and body problems of a plan as its tasks are expanded, in the playbook's order. */
class PlanParts {
  readonly steps: Step[] = [];
  /** Each write's target, by step id: a rollout's waves share out targets, all of a target's calls in one wave. */
  private readonly targetOf = new Map<string, string>();
  readonly skipped: SkippedTarget[] = [];
  readonly problems: InputProblem[] = [];

  constructor(
    private readonly input: PlanInput,
    private readonly company: string,
  ) {}

  /** Expands one task onto its targets, assigns its waves, and says what it came to. */
  task(asWritten: Task): TaskSummary {
    const { playbook, inventory, date } = this.input;
    const partner = partnerOf(playbook, asWritten);
    const task = withPartnerGuards(asWritten, partner);
    const action = ACTIONS.get(task.action)!;
    const offer = action.offer && ((env: Environment) => action.offer!(env, task.with));
    const t: TaskInPlan = {
      task,
      action,
      inventory: offer ? { ...inventory, environments: inventory.environments.map(offer) } : inventory,
      ctx: {
        with: task.with,
        company: this.company,
        date,
        inventory,
        ...(this.input.releases ? { releases: this.input.releases } : {}),
        ...(this.input.withholding ? { withholding: this.input.withholding } : {}),
        ...(task.rollout?.staging_first ? { pinVersions: true as const } : {}),
      },
      ...(task.backup_first ? { backupTag: restorePoint.tag(task.name, date) } : {}),
    };
    const before = { steps: this.steps.length, skipped: this.skipped.length };
    const matched = this.expand(t);
    if (partner) this.steps.push(...joinSteps(this.steps.splice(before.steps), partner, this.steps));
    else if (task.rollout) assignTaskWaves(task.name, task.rollout, this.steps.slice(before.steps), this.targetOf);
    return taskSummary(t, playbook, {
      matched,
      steps: this.steps.length - before.steps,
      skipped: this.skipped.length - before.skipped,
    });
  }

  /** The task's targets by its action's scope; returns how many it matched. */
  private expand(t: TaskInPlan): number {
    const { playbook } = this.input;
    const { task, action, ctx, inventory } = t;
    if (action.scope === 'once' || (action.scope === 'site' && task.target === undefined)) {
      const expansions = action.expandOnce(ctx);
      this.add(t, onceTarget(task, this.company, expansions), expansions, { key: 'once' });
      return 1;
    }
    const envs = selectEnvironments(playbook, task, inventory);
    if (action.scope === 'site') return this.expandSites(t, action, envs);
    if (action.scope === 'domain') {
      let matched = 0;
      for (const env of envs)
        for (const domain of inventory.domains?.[env.id] ?? []) {
          const expansions = action.expandDomain(domain, env, ctx);
          if (expansions.length === 0) continue;
          matched++;
          this.add(t, { ...envTarget(env), domain_id: domain.id, domain: domain.name }, expansions, { key: domain.id });
        }
      return matched;
    }
    if (task.rollout?.staging_first) return this.expandStaged(t, action, envs);
    for (const env of envs) this.onEnvironment(t, env, action.expandEnvironment(env, ctx));
    return envs.length;
  }

  /** One environment's expansions, behind the task's health guard (only an environment with something to send needs a page to check). */
  private onEnvironment(t: TaskInPlan, env: Environment, expansions: Expansion[], mark: Mark = {}): void {
    const { task, action } = t;
    const guard = task.health && expansions.some((e) => 'request' in e) ? healthGuard(task.health, env, t.inventory) : {};
    if (guard.skip) this.skipped.push({ task: task.name, task_index: task.index, action: action.name, target: envTarget(env), reason: guard.skip });
    else this.add(t, envTarget(env), expansions, { key: env.id, guard, mark });
  }

  /**
   * `rollout.staging_first`: each selected (non-staging) environment's updates, as the task's own
   * policy allows them, judged against its site's staging environment (staging-first.ts): staged there
   * tonight, taken by live once staging has soaked, or held with the reason. A staging environment
   * the task selects is staged through its live siblings, never updated as a live one; a staging
   * environment several siblings share gets one step with every theme any of them stages.
   */
  private expandStaged(t: TaskInPlan, action: EnvironmentAction, envs: Environment[]): number {
    const stagingSites = new StagingSites(t.inventory, t.task.rollout!);
    const live = envs.filter((env) => !stagingSites.isStaging(env));
    const sites = live.flatMap((env) => this.judgeSite(t, action, env, stagingSites.of(env)) ?? []);
    type Staging = { env: Environment; items: Map<string, InstalledItem>; decisions: StagingDecision[] };
    const stagings = new Map<string, Staging>();
    for (const { staging, judged } of sites) {
      if (!staging || judged.stage.length === 0) continue;
      const entry: Staging = stagings.get(staging.id) ?? { env: staging, items: new Map(), decisions: [] };
      for (const th of judged.stage) entry.items.set(th.name, th);
      for (const d of judged.decisions.filter((d) => stagedTonight(d, judged)))
        if (!entry.decisions.some((k) => nameOf(k) === nameOf(d) && k.version === d.version)) entry.decisions.push(d);
      stagings.set(staging.id, entry);
    }
    for (const s of stagings.values())
      this.onEnvironment(t, s.env, action.expandEnvironment(offering(s.env, [...s.items.values()]), t.ctx), { role: 'staging', staging: s.decisions });
    for (const site of sites) this.onLive(t, action, site);
    return live.length;
  }

  /**
   * One live environment's updates judged: what the task's own policy sends here, one theme at a time
   * (the action decides, the planner reads no body; what it leaves alone is skipped with its words),
   * then each against staging. A version staging would be offered but the policy leaves alone there
   * cannot be staged: held, in the staging skip's words.
   */
  private judgeSite(t: TaskInPlan, action: EnvironmentAction, env: Environment, staging: Environment | undefined): StagedSite | undefined {
    const offered = installedOf(env, action.items!).filter((th) => th.update_available);
    // Why the policy leaves an update alone on live (its words), or undefined when it sends it.
    const refusal = (th: InstalledItem) => {
      const expansions = action.expandEnvironment(offering(env, [th]), t.ctx);
      if (expansions.some((e) => 'request' in e)) return undefined;
      return expansions.flatMap((e) => ('skip' in e ? [e.skip] : [])).join('; ');
    };
    // The policy judges the version live would take: one staging soaked (pinned), else the newest
    // offered; the newest too where the soaked one is no longer acceptable (superseded: staged first).
    const table = this.input.staging!.table;
    const superseded = new Map<string, string>();
    const wanted = offered.filter((th) => {
      const soaked = staging && soakedOn(th, staging, table);
      const pinned = towards(th, soaked);
      const refused = refusal(pinned);
      const reason = supersededSoak(th, soaked, { sendsNewest: (pinned === th ? refused : refusal(th)) === undefined, refused });
      if (reason !== undefined) superseded.set(th.name, reason);
      return reason !== undefined || refused === undefined;
    });
    const rest = offered.filter((th) => !wanted.includes(th));
    if (wanted.length === 0 || rest.length > 0) this.onEnvironment(t, env, action.expandEnvironment(offering(env, rest), t.ctx));
    if (wanted.length === 0) return undefined;
    const judged = judgeStaged({ live: env, staging }, wanted, t.task.rollout!, this.input.staging!, superseded);
    for (const [i, d] of judged.decisions.entries()) {
      if (!stagedTonight(d, judged)) continue;
      const item = installedOf(staging!, action.items!).find((th) => th.name === nameOf(d))!;
      const refused = action.expandEnvironment(offering(staging!, [item]), t.ctx).find((e) => 'skip' in e);
      if (!refused || !('skip' in refused)) continue;
      // Staging cannot take it: live waits, unless it takes it unstaged tonight (rollout.security_bypass).
      if (d.code === 'staged') judged.decisions[i] = mismatch(d, `the task's policy leaves it alone on ${staging!.name}: ${refused.skip}`);
      judged.stage = judged.stage.filter((th) => th.name !== nameOf(d));
    }
    return { env, staging, judged };
  }

  /** Live's part: the promoted themes' update, and one skip naming why each other theme waits. */
  private onLive(t: TaskInPlan, action: EnvironmentAction, { env, judged }: StagedSite): void {
    // What live takes tonight (promoted, bypassed, no staging); a theme may also be staged anew the night
    // live takes the version staging soaked: live waits for that newer version, never for one it takes.
    const tonight = judged.decisions.filter((d) => liveTakes(d, judged.promote));
    const promoted = tonight.filter((d) => d.code === 'promoted' || d.code === 'no_staging' || d.code === 'staging_bypassed');
    if (judged.promote.length > 0) this.onEnvironment(t, env, action.expandEnvironment(offering(env, judged.promote), t.ctx), { staging: promoted });
    const held = judged.decisions.filter((d) => !tonight.includes(d));
    if (held.length > 0)
      this.skipped.push({
        task: t.task.name,
        task_index: t.task.index,
        action: action.name,
        target: envTarget(env),
        reason: held.map(stagingWords).join('; '),
        staging: held,
      });
  }

  /** Once per site of the selected environments; a site without an id is a problem of the playbook. */
  private expandSites(t: TaskInPlan, action: SiteAction, envs: Environment[]): number {
    let matched = 0;
    for (const site of sitesOf(envs, t.inventory.environments)) {
      if (!site.id) {
        this.problems.push({
          path: `tasks.${t.task.index}.target`,
          message: `no site id for site ${JSON.stringify(site.name)}: add it under sites: in the playbook, or pass --sites FILE`,
        });
        continue;
      }
      matched++;
      const expansions = action.expandSite({ id: site.id, name: site.name, environments: site.environments }, t.ctx);
      this.add(t, siteTarget({ site_id: site.id, site: site.name }, expansions), expansions, { key: site.id });
    }
    return matched;
  }

  /** A target's expansions as steps (or skips), its restore point just before its first write. */
  private add(t: TaskInPlan, target: Target, expansions: Expansion[], { key, guard = {}, mark = {} }: { key: string; guard?: Guard; mark?: Mark }): void {
    const { task, action, backupTag } = t;
    let backupStep: string | undefined;
    const written: Step[] = [];
    for (const [i, e] of expansions.entries()) {
      if ('skip' in e) {
        this.skipped.push({ task: task.name, task_index: task.index, action: action.name, target, reason: e.skip, ...releaseAgeOf(e) });
        continue;
      }
      // The restore point goes just before the environment's first write, and every write waits for it.
      if (backupTag && target.env_id && !(guard.health && 'missing' in guard.health) && backupStep === undefined) {
        backupStep = `${task.index}:${key}:backup`;
        this.steps.push({
          ...stepOf(backupStep, task, restorePoint.action.name, target, restorePoint.request(target.env_id, backupTag), false),
          role: 'backup',
        });
      }
      const id = `${task.index}:${key}${e.key !== undefined ? `:${e.key}` : expansions.length > 1 ? `:${i}` : ''}`;
      this.targetOf.set(id, `${task.index}:${key}`);
      const endpoint = ENDPOINTS[e.request.endpoint];
      if ('body' in endpoint) this.problems.push(...checkBody(task, endpoint.body, e.request.body, target, this.input.env ?? {}));
      // Each call carries the staging decisions of the items it updates (a pinned update: its one theme).
      const staging = e.items ? mark.staging?.filter((d) => e.items!.includes(nameOf(d))) : mark.staging;
      // A staging step's decisions are live's to say (its skip): its own note stays the action's.
      const note = [e.note, ...(mark.role === 'staging' ? [] : (staging ?? []).map(stagingWords))].filter(Boolean).join('; ');
      const step: Step = {
        ...stepOf(id, task, action.name, target, e.request, !action.creates),
        ...(note ? { note } : {}),
        ...(mark.role ? { role: mark.role } : {}),
        ...(staging ? { staging } : {}),
        ...(e.precondition ? { precondition: e.precondition } : {}),
        ...(backupStep ? { backup_step: backupStep } : {}),
        ...(guard.health ? { health: guard.health } : {}),
        ...releaseAgeOf(e),
        // Only where isolation needs them: every other plan reads as it did.
        ...(e.updates && task.health?.on_broken === 'isolate' ? { updates: e.updates } : {}),
      };
      this.steps.push(step);
      written.push(step);
    }
    // Under on_broken: restore each write keeps its own guard: a write seen breaking its site alone
    // names the version the run's quarantine keeps from every other site.
    if (action.items && guard.health && 'url' in guard.health && task.health?.on_broken !== 'restore') guardTogether(written);
  }
}

/**
 * One guard per environment: a task's pinned item writes to one environment (one a version) go
 * under one look: the first's id marks them all (Step.guard_group). A guard per write would clear
 * the cache and look at the page once for each item, and restore the site once for each that broke it.
 * Not under `on_broken: restore`: there no isolation tells which write of a group broke the site.
 */
function guardTogether(writes: Step[]): void {
  if (writes.length < 2) return;
  for (const step of writes) step.guard_group = writes[0]!.id;
}

/** A decision of what the site's staging takes tonight: staged, or bypassed where staging is offered it too (its version, not one live takes after a soak). */
function stagedTonight(d: StagingDecision, judged: StagingJudgement): boolean {
  return (d.code === 'staged' || d.code === 'staging_bypassed') && judged.stage.some((th) => th.name === nameOf(d) && th.update_version === d.version);
}

/** The plural of a kind other than the theme (whose count every plan gives). */
type Plural = Exclude<(typeof KIND_TABLE)[Kind]['plural'], 'themes'>;

/** The plan's line on what it read: a kind not read is left out (a theme-only plan reads as before plugins came). */
function inventorySummary(inventory: Inventory): Plan['inventory'] {
  const others = OTHER_KINDS.flatMap((kind): [string, number | string][] => {
    const listed = inventory.listed[kind];
    const plural = KIND_TABLE[kind].plural;
    if (!listed) return [];
    const each: [string, string][] = listed.from_environments ? [[`${plural}_from_environments`, listed.from_environments]] : [];
    return [[plural, listed.count], ...each];
  });
  return {
    environments: inventory.environments.length,
    themes: inventory.listed.theme?.count ?? 0,
    ...Object.fromEntries(others),
    ...(inventory.last_updated_at ? { last_updated_at: inventory.last_updated_at } : {}),
  };
}

/**
 * A rollout's waves over the task's targets: every write of a target (pinned updates: one per theme)
 * goes in its target's wave, and so does its restore point, which all of them wait for.
 */
function assignTaskWaves(taskName: string, rollout: NonNullable<Task['rollout']>, taskSteps: Step[], targetOf: Map<string, string>): void {
  const writes = taskSteps.filter((s) => s.role !== 'backup');
  const target = (s: Step) => targetOf.get(s.id) ?? s.id;
  const waves = assignWaves(taskName, [...new Set(writes.map(target))], rollout);
  const byId = new Map(taskSteps.map((s) => [s.id, s]));
  for (const step of writes) {
    step.wave = waves.get(target(step))!;
    if (step.backup_step) byId.get(step.backup_step)!.wave = step.wave;
  }
}

/** What a task came to, with the rules the executor keeps for it. */
function taskSummary({ task, action, backupTag }: TaskInPlan, playbook: Playbook, counts: { matched: number; steps: number; skipped: number }): TaskSummary {
  // A guarded write is judged after its operation ended, and waits for its backup's: both follow operations.
  // An action whose work is known only once its operation ended (WordPress's command prints nothing) always waits.
  const wait =
    action.waits === true ||
    task.rollout !== undefined ||
    task.health !== undefined ||
    task.backup_first !== undefined ||
    // An item's own step (after_update) follows its write's operation.
    Array.isArray(task.with.after_update) ||
    (task.wait ?? playbook.settings.wait ?? false);
  const timeout = task.timeout ?? playbook.settings.wait_timeout;
  return {
    index: task.index,
    name: task.name,
    action: action.name,
    ...counts,
    allow_empty: task.allow_empty,
    ...(task.max_failures === undefined ? {} : { max_failures: task.max_failures }),
    ...(wait ? { wait } : {}),
    ...(timeout ? { timeout_ms: parseDuration(timeout) } : {}),
    ...(task.verify ? { verify: true } : {}),
    ...(task.health ? { health: task.health } : {}),
    ...(backupTag ? { backup_first: { tag: backupTag, ...(typeof task.backup_first === 'object' ? { keep: task.backup_first.keep } : {}) } } : {}),
    ...(action.endpoint === 'addManualBackup' && typeof task.with.keep === 'number' ? { keep_backups: task.with.keep } : {}),
    ...(Array.isArray(task.with.after_update) ? { after_update: task.with.after_update as string[] } : {}),
    ...(task.rollout && task.rollout.together === undefined
      ? { rollout: { canary: task.rollout.canary ?? 0, waves: task.rollout.waves ?? ['100%'], pause_ms: parseDuration(task.rollout.pause ?? '0s') ?? 0 } }
      : {}),
  };
}

/**
 * The sites of the selected environments, in inventory order, each with its id (if a sites map gave
 * it) and all its environments (a clone's source may be one the selector did not pick).
 */
function sitesOf(selected: Environment[], all: Environment[]): { id?: string; name: string; environments: Environment[] }[] {
  const names = new Set(selected.map((e) => e.site));
  const sites = new Map<string, { id?: string; name: string; environments: Environment[] }>();
  for (const env of all.filter((e) => names.has(e.site))) {
    const site = sites.get(env.site) ?? { id: env.site_id, name: env.site, environments: [] };
    site.id ??= env.site_id;
    site.environments.push(env);
    sites.set(env.site, site);
  }
  return [...sites.values()];
}

/** What `health:` makes of one environment: the page to check, or why there is none. */
interface Guard {
  health?: { url: string } | { missing: string };
  /** The environment is left alone (`on_missing_domain: skip`). */
  skip?: string;
}

function healthGuard(spec: HealthSpec, env: Environment, inventory: Inventory): Guard {
  const domains = inventory.domains?.[env.id] ?? [];
  const domain = spec.domain ? domains.find((d) => matchesAny(d.name, spec.domain)) : domains[0];
  let problem: string | undefined;
  let url: string | undefined;
  if (usesDomain(spec) && !domain) problem = `health: no domain to check${spec.domain ? ` matching ${spec.domain.join(', ')}` : ''} (${domains.length} listed)`;
  else {
    const filled = healthUrl(spec, { domain: domain?.name, site: env.site, env: env.name, env_id: env.id });
    if ('problem' in filled) problem = `health: ${filled.problem}`;
    else url = filled.url;
  }
  if (url !== undefined) return { health: { url } };
  return spec.on_missing_domain === 'fail' ? { health: { missing: problem! } } : { skip: `${problem!}; not updated (on_missing_domain: skip)` };
}

function stepOf(id: string, task: Task, action: string, target: Target, request: RequestSpec, idempotent: boolean): Step {
  const endpoint = ENDPOINTS[request.endpoint];
  return {
    id,
    task: task.name,
    task_index: task.index,
    action,
    target,
    endpoint: request.endpoint,
    method: endpoint.method,
    path: fillPath(endpoint.path, request.params),
    params: request.params,
    ...(request.body === undefined ? {} : { body: request.body }),
    idempotent,
    ...lockOf(target, request),
  };
}

function releaseAgeOf(e: Expansion): Pick<Step, 'release_age' | 'withheld'> {
  return { ...(e.release_age ? { release_age: e.release_age } : {}), ...(e.withheld ? { withheld: e.withheld } : {}) };
}

function envTarget(env: Environment): Target {
  return { env_id: env.id, site: env.site, environment: env.name };
}

/** A site's target: with the environment its call changes, as the action says (a push's target). */
function siteTarget(site: Target, expansions: Expansion[]): Target {
  const changes = expansions.find((e) => 'request' in e)?.request.changes;
  return changes ? { ...site, env_id: changes } : site;
}

/** A call once on `with.site_id` (the planner reads `with`, the action's input, never a body), else the company. */
function onceTarget(task: Task, company: string, expansions: Expansion[]): Target {
  const siteId = (task.with as Record<string, unknown>).site_id;
  return typeof siteId === 'string' ? siteTarget({ site_id: siteId }, expansions) : { company };
}

/** A write occupies its target's environment, else the one its action says it occupies (a clone: its source). */
function lockOf(target: Target, request: RequestSpec): { lock?: string } {
  const lock = target.env_id ?? request.occupies;
  return lock ? { lock } : {};
}

export function checkBody(task: Task, schema: string, body: unknown, target: Target, env: Record<string, string | undefined>): InputProblem[] {
  // Secret fields hold `${VAR}` references: check the value they will be sent with (and only those fields).
  const resolved = fillSecrets(body ?? {}, ACTIONS.get(task.action)?.secretFields, env);
  const where = target.domain ?? (target.site ? `${target.site}/${target.environment}` : undefined);
  return bodyProblems(schema, resolved).map((p) => {
    const fieldName = p.path.replace(/^body\.?/, '').split('.')[0] ?? '';
    const inWith = fieldName !== '' && task.with && fieldName in task.with;
    return {
      path: `tasks.${task.index}.with${inWith ? `.${fieldName}` : ''}`,
      message: `${p.path.replace(/^body\.?/, '') || 'body'}: ${p.message}${where ? ` (for ${where})` : ''}`,
    };
  });
}

function dedupe(problems: InputProblem[]): InputProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.path}\u0000${p.message.replace(/ \(for .*\)$/, '')}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
