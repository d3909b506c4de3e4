import type { EndpointName } from '../api/endpoints.js';
import type { InputProblem } from '../errors.js';
import type { Environment, Inventory } from '../inventory/inventory.js';
import type { ItemRef, Kind } from '../inventory/kinds.js';
import type { ReleaseAgeDecision, ReleaseClock } from '../inventory/release-age.js';
import type { WithheldDecision, Withholding } from '../inventory/withheld.js';
import type { PlaybookFiles } from '../util/input-file.js';
import type { OutputKind } from '../util/output-file.js';

/** What a step acts on; recorded in the plan and the report. */
export interface Target {
  env_id?: string;
  site?: string;
  environment?: string;
  domain_id?: string;
  domain?: string;
  site_id?: string;
  company?: string;
}

/** One API call the plan will make. */
export interface RequestSpec {
  endpoint: EndpointName;
  params: Record<string, string>;
  body?: unknown;
  /**
   * Said by the action that builds the request, which alone knows its body: the environment a
   * site-scoped call changes (a push: its target), named in the step's target; and the one it
   * occupies while it runs when that is not the target's own (a clone: its source), which the
   * executor keeps other writes off. The planner reads no body field.
   */
  changes?: string;
  occupies?: string;
}

/**
 * `precondition`: what the listing showed that the call depends on, in words (`astra 2.1 → 2.2`). A
 * saved plan is applied only while a fresh read of the fleet gives the same words. `release_age`:
 * the themes the release age held back or sent early here, with their dates (the note says the same in words).
 */
export type Expansion =
  | {
      request: RequestSpec;
      note?: string;
      precondition?: string;
      release_age?: ReleaseAgeDecision[];
      /** Updates the company's history left alone here (quarantined, retry_later, unreadable_record), with when, where, why and the override. */
      withheld?: WithheldDecision[];
      /** Names the call among its target's several (a theme's pinned update), so that its step's id stays when others come and go. */
      key?: string;
      /** The items (themes) the call updates, when the action knows them: a decision about another item is not this step's. */
      items?: string[];
      /** Each item the call updates and the versions it moves between, as offered (`health.on_broken: isolate` takes a write apart by these). */
      updates?: ItemChange[];
    }
  | { skip: string; release_age?: ReleaseAgeDecision[]; withheld?: WithheldDecision[] };

/** A site, for actions that act once per site: its id (from a sites map) and its environments in the listing. */
export interface SiteTarget {
  id: string;
  name: string;
  environments: Environment[];
}

/** A task's `with:` block: checked against the action's schema before any action code sees it. */
export type WithBlock = Record<string, unknown>;

export interface ExpandContext<W extends object = WithBlock> {
  /** The task's `with:` block, after `${ENV}` references outside secret fields were resolved. */
  with: W;
  company: string;
  /** `{{date}}` in templates: the run's date, YYYY-MM-DD, given to the planner (it reads no clock). */
  date: string;
  inventory: Inventory;
  /**
   * The time to judge release ages at and when each theme version was first seen, for a task whose
   * action `reads` `first_seen`; undefined where no age is judged (validate's stand-in expansion).
   */
  releases?: ReleaseClock;
  /**
   * The planner judged each version this task sends beyond the action's own policy (rollout.staging_first:
   * the version staging soaked, or the one it stages): the action must install that very version.
   */
  pinVersions?: true;
  /** The company's quarantine and retry tables and the time to judge at (inventory/withheld.ts); undefined where none is judged. */
  withholding?: Withholding;
}

/** A domain of an environment, as the domain list gives it (domain-scoped actions expand on each). */
export interface DomainTarget {
  id: string;
  name: string;
  uses_provider_dns: boolean;
}

/**
 * What the plan must read before it can expand a task (beyond the theme listing). `first_seen`: when
 * each item version was first seen, which the command records from the listings before it plans.
 */
export type InventoryRead = 'domains' | 'backups' | 'first_seen';

/** One step of a task, as the hooks of its action see it after the run: what was sent and what came back. */
/** What a read back found of a step's work (Action.readBack). */
export interface ReadBack {
  runs: ItemVersion[];
  differs?: string;
  stays?: ItemVersion[];
}

export interface StepOutcome {
  target: Target;
  body?: unknown;
  /** How the step ended (a run's StepStatus: `succeeded`, `failed`…; `planned` in a dry run); none when it was never sent. */
  status?: string;
  /** What the synchronous answer held that the action asked to keep privately (`readAnswer`'s `output`). */
  private_output?: unknown;
  /** What the step's operation said it printed (`readOperation`'s `output`). */
  output?: string | null;
  /** What the listing showed the call depended on, in the action's words (`astra 4.1.0 → 4.1.1`). */
  precondition?: string;
}

/**
 * One line of a client's maintenance record: what a step did, under a heading that gathers the same
 * work across sites (`Theme updates`), with what it printed beside it when it printed something.
 * Service text stays as it came: the page makes it safe.
 */
export interface RecordLine {
  heading: string;
  text: string;
  detail?: string;
  /** `backup`: something the site can be restored from; the record gives its age. */
  kind?: 'backup';
}

/** An installed item (a theme, a plugin) and the version an environment runs of it. */
export interface ItemVersion {
  name: string;
  version: string;
}

/**
 * An update a write carries: its item, named in a field for its kind (`{plugin: "akismet"}`), and the
 * versions the listing showed it moving between. A bulk update installs whatever is newest when the
 * service runs it, so `to` is what was offered when the plan was made.
 */
export type ItemChange = ItemRef & { from: string; to: string };

/** What a creating step made: the id of the new environment or site. */
export type Created = { env_id: string } | { site_id: string };

/** What an action reads in a finished operation's `data` (or a write's answer done at once). */
export interface OperationReading {
  created?: Created;
  /** What a command printed; null when the answer holds none. */
  output?: string | null;
}

/** See `confirmBatch`. */
export interface BatchConfirm {
  /** The listing's `search` terms that cover these steps (one filtered read each), or [] for the whole listing. */
  searches(steps: readonly StepOutcome[]): string[];
  /** Whether `listing` shows the step's work done. */
  shows(step: StepOutcome, listing: Inventory): boolean;
}

/** A file the run writes for the user with what the service answered (secrets: mode 0600, never a report). */
export interface PrivateOutput {
  /** What the file holds, for the line that says it was written: "login links". */
  what: string;
  file: string;
  text: string;
}

/**
 * What every action has, whatever it acts on. `W` is the shape of its `with:` block, as its
 * `withSchema` guarantees it (the registry holds them all as `Action`). The optional hooks are the
 * only places the plan, the run and the commands learn something particular to an action: they name
 * no action themselves.
 */
interface ActionBase<W extends object> {
  name: string;
  summary: string;
  /** JSON Schema of the task's `with:` block. */
  withSchema: Record<string, unknown>;
  /**
   * A `with:` block that works (untargeted, for a site action): the conformance test loads it in a
   * playbook, expands it and checks every body it gives against the API's schema.
   */
  example: W;
  endpoint: EndpointName;
  /** Other endpoints its requests may name (themes.update sends a version it judged by the pinned update). */
  alsoSends?: EndpointName[];
  /**
   * Its tasks always follow their operations to the end (`wait`): the work can only be read back once
   * the operation ended (WordPress's `wp core update` prints nothing back).
   */
  waits?: true;
  /**
   * The environment as this task's `with:` offers it (WordPress: the version chosen of those known):
   * the plan expands and judges the task on it, staging first included.
   */
  offer?(env: Environment, withBlock: W): Environment;
  /**
   * The kind of installed item the action updates: the plan reads that kind's listing first, and
   * `verify`, `readBack` and `confirmBatch` are handed a listing of that kind (kinds.ts says which).
   */
  items?: Kind;
  /**
   * True when sending the call twice would do the work twice (a second backup, a second domain).
   * Such calls are never re-sent once they may have reached the server.
   */
  creates: boolean;
  /**
   * `rollout.staging_first` may rerun this action's update on each site's staging environment first:
   * an environment-scoped update whose effect the listing shows per version (plan/staging-first.ts).
   */
  stagesFirst?: boolean;
  /** Fields of `with` that hold secrets: they must be `${ENV_VAR}` references and are resolved only when sent. */
  secretFields?: string[];
  /** Checks a schema cannot express; `path` is relative to the `with` block. */
  check?(withBlock: W, files: PlaybookFiles): InputProblem[];
  /**
   * Values the spec allows but public evidence of the real service does not, or that would do harm the
   * spec cannot see (warnings; `validate --strict` makes them errors). `path` is relative to the `with` block.
   */
  advise?(withBlock: W): InputProblem[];
  /**
   * The things one of this action's skip reasons or notes names, each in words that stand alone (a
   * theme left alone and why), so a summary counts each apart across targets. Without this hook a
   * reason is one thing.
   */
  reasonParts?(reason: string): string[];
  /** Loads what the check referenced (e.g. an IP list file) into the block; runs after `check` passed. */
  prepare?(withBlock: W, files: PlaybookFiles): W;
  /** Reads the plan needs for this task besides the listing (a domain-scoped action's domain lists are implied). */
  reads?(withBlock: W): InventoryRead[];
  /**
   * A synchronous answer (2xx, no operation) that says more than "done": a note for the step's
   * reason, and what to keep for `privateOutput` (never written to a report or log).
   */
  readAnswer?(data: unknown): { note?: string; output?: unknown };
  /**
   * What a finished operation's `data` says that this action knows how to read: the id of what it
   * created, what a command printed. It is service text: kept as data, shown only through safe-text.
   */
  readOperation?(data: unknown): OperationReading;
  /**
   * `verify: true`: once the task's operations ended, judge each step that succeeded against a fresh
   * listing; a reason means the work is not seen done (the step becomes failed). Without this hook a
   * task may not ask for `verify`.
   */
  verify?(step: StepOutcome, listing: Inventory): string | undefined;
  /**
   * Steps whose work is read back from a fresh listing once the task's operations ended, `verify` or
   * not: what the environment runs is recorded (`runs`), and a step that does not run what was judged
   * fails with `differs`; `stays` names the items still on the version the write replaced (the step
   * fails `not_updated`, and `differs` says so). Undefined for a step not read back.
   */
  readBack?(step: StepOutcome, listing: Inventory): ReadBack | undefined;
  /**
   * Whether a step the listing confirmed (`confirmed_by: "listing"`) is read back all the same: the
   * confirmation read it by the same rule, so only a step whose `runs` must be recorded (a pinned
   * version) is. Without this hook, none is.
   */
  readsBackConfirmed?(step: StepOutcome): boolean;
  /**
   * The commands that follow a write of this action whose operation succeeded (the life's database
   * step, run/life/database-step.ts), by what its body updates and the slugs the task names
   * (`with.after_update`): constants of after-update.ts, never text from the service.
   */
  followUp?(body: unknown, afterUpdate: readonly string[] | undefined): string[];
  /**
   * How a batch of this action's operations can be confirmed by one read of the listing instead of a
   * poll each. The listing only ever confirms success: a step it does not show done is polled, since
   * a failure's message is only in the operation's answer. Without this hook every operation is polled.
   */
  confirmBatch?: BatchConfirm;
  /**
   * What a step that did its work did, for the maintenance record a client reads (`astra 4.1.0 →
   * 4.1.1`, `PHP 8.3 set`). Without this hook the record names the step's task.
   */
  record?(step: StepOutcome): RecordLine | undefined;
  /** The file this task's answers go to (login links, what a command printed), built from its steps; undefined when none kept anything. */
  privateOutput?(withBlock: W, steps: StepOutcome[]): PrivateOutput | undefined;
  /**
   * Where `privateOutput` will write, known before anything is sent: the `with` field naming it and
   * the kind of file it is, so a run refuses up front a path it must not replace (see util/output-file.ts).
   */
  privateFile?(withBlock: W): { field: string; file: string; kind: OutputKind } | undefined;
}

/** One call per selected environment. */
export interface EnvironmentAction<W extends object = WithBlock> extends ActionBase<W> {
  scope: 'environment';
  /**
   * The call changes nothing on the environment's site (a login link): a task of it may not ask for
   * `health:` or `backup_first:`, which guard changes. @default false
   */
  readOnly?: true;
  expandEnvironment(env: Environment, ctx: ExpandContext<W>): Expansion[];
}

/** One call per domain of the selected environments (the plan reads their domain lists first). */
export interface DomainAction<W extends object = WithBlock> extends ActionBase<W> {
  scope: 'domain';
  /** An empty list: the domain is not this task's (it says nothing in the plan). */
  expandDomain(domain: DomainTarget, env: Environment, ctx: ExpandContext<W>): Expansion[];
}

/** A single call whose ids come from `with` (the listing has no site ids). */
export interface OnceAction<W extends object = WithBlock> extends ActionBase<W> {
  scope: 'once';
  expandOnce(ctx: ExpandContext<W>): Expansion[];
}

/**
 * A site's call: without a target, once on `with.site_id`; with one, once per site of the selected
 * environments (site ids from `sites:` or `--sites`).
 */
export interface SiteAction<W extends object = WithBlock> extends ActionBase<W> {
  scope: 'site';
  expandOnce(ctx: ExpandContext<W>): Expansion[];
  expandSite(site: SiteTarget, ctx: ExpandContext<W>): Expansion[];
}

/**
 * One playbook action. Adding an action is one file in this folder plus one line in `index.ts`; the
 * playbook schema, validation, planning and execution pick it up from here. The scope brings its
 * expander with it, so the planner needs no `!`.
 */
export type Action<W extends object = WithBlock> = EnvironmentAction<W> | DomainAction<W> | OnceAction<W> | SiteAction<W>;

/** What the plan reads for a task of `action` before expanding it. */
export function readsOf(action: Action, withBlock: WithBlock): InventoryRead[] {
  const reads = new Set(action.reads?.(withBlock) ?? []);
  if (action.scope === 'domain') reads.add('domains');
  return [...reads];
}

/** What a task's target selects, in words: a domain-scoped task's targets are domains. */
export function targetNoun(action: Action): string {
  return action.scope === 'domain' ? 'domain' : 'environment';
}

/** Whether a task of `action` takes a `target` (a site action takes one or `with.site_id`). */
export function takesTarget(action: Action): 'required' | 'optional' | 'never' {
  return action.scope === 'once' ? 'never' : action.scope === 'site' ? 'optional' : 'required';
}

/** A secret field's whole value: one `${NAME}` reference, as the schema's `secretRef` demands. */
const SECRET_REF = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/**
 * Fills the action's secret fields (top-level body fields named in `secretFields`) from `env`, and
 * nothing else: a name the service gave a site, brought into a body by a template, is never scanned
 * for `${VAR}`, so it can never read the job's environment. Returns `body` itself when nothing is
 * filled (no copy: this runs for every call). An unset variable leaves the reference as written.
 */
export function fillSecrets(body: unknown, fields: readonly string[] | undefined, env: Record<string, string | undefined>): unknown {
  if (!fields?.length || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  let copy: Record<string, unknown> | undefined;
  for (const field of fields) {
    const value = (body as Record<string, unknown>)[field];
    const name = typeof value === 'string' ? SECRET_REF.exec(value)?.[1] : undefined;
    if (name === undefined || env[name] === undefined) continue;
    copy ??= { ...(body as Record<string, unknown>) };
    copy[field] = env[name];
  }
  return copy ?? body;
}

/** `{{date}}`, `{{env}}`, `{{site}}`, `{{env_id}}` in a template string. */
export function fillTemplate(text: string, values: Record<string, string>): string {
  return text.replace(/\{\{\s*([a-z_]+)\s*\}\}/g, (whole, name: string) => values[name] ?? whole);
}

/** Names a `{{…}}` template may use; DNS record names may also say `{{domain}}`. */
export const TEMPLATE_NAMES = ['date', 'env', 'site', 'env_id', 'domain'];

export function templateValues(ctx: Pick<ExpandContext, 'date'>, env?: Environment): Record<string, string> {
  return env ? { date: ctx.date, env: env.name, site: env.site, env_id: env.id } : { date: ctx.date };
}

/** Whether the action reads this step back once its wave ended (asked of its body alone: no listing is needed to tell). */
export function readsBackStep(action: Action, step: StepOutcome): boolean {
  return action.readBack?.(step, { company: '', environments: [], listed: {} }) !== undefined;
}
