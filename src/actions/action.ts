import type { EndpointName } from '../api/endpoints.js';
import type { InputProblem } from '../errors.js';
import type { Environment, Inventory } from '../inventory/inventory.js';
import type { PlaybookFiles } from '../util/input-file.js';

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
}

export type Expansion = { request: RequestSpec; note?: string } | { skip: string };

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
}

/**
 * One playbook action. Adding an action is one file in this folder plus one line in `index.ts`; the
 * playbook schema, validation, planning and execution pick it up from here. `W` is the shape of its
 * `with:` block, as its `withSchema` guarantees it (the registry holds them all as `Action`).
 */
export interface Action<W extends object = WithBlock> {
  name: string;
  summary: string;
  /** JSON Schema of the task's `with:` block. */
  withSchema: Record<string, unknown>;
  /**
   * `environment`: one call per selected environment; `domain`: one per domain of the selected
   * environments; `once`: a single call whose ids come from `with` (the listing has no site ids).
   */
  scope: 'environment' | 'domain' | 'once';
  endpoint: EndpointName;
  /**
   * True when sending the call twice would do the work twice (a second backup, a second domain).
   * Such calls are never re-sent once they may have reached the server.
   */
  creates: boolean;
  /** Fields of `with` that hold secrets: they must be `${ENV_VAR}` references and are resolved only when sent. */
  secretFields?: string[];
  /** Checks a schema cannot express; `path` is relative to the `with` block. */
  check?(withBlock: W, files: PlaybookFiles): InputProblem[];
  /**
   * Values the spec allows but public evidence of the real service does not (warnings; `validate
   * --strict` makes them errors). `path` is relative to the `with` block.
   */
  advise?(withBlock: W): InputProblem[];
  /** Loads what the check referenced (e.g. an IP list file) into the block; runs after `check` passed. */
  prepare?(withBlock: W, files: PlaybookFiles): W;
  expandEnvironment?(env: Environment, ctx: ExpandContext<W>): Expansion[];
  expandDomain?(domain: { id: string; name: string; uses_provider_dns: boolean }, env: Environment, ctx: ExpandContext<W>): Expansion[];
  expandOnce?(ctx: ExpandContext<W>): Expansion[];
  /**
   * Site-scoped actions: with a `target`, one call per site of the selected environments (site ids
   * from `sites:` or `--sites`), instead of one call on `with.site_id`.
   */
  expandSite?(site: SiteTarget, ctx: ExpandContext<W>): Expansion[];
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
