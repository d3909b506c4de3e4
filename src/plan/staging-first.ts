import { installedOf, type Environment, type InstalledItem, type Inventory } from '../inventory/inventory.js';
import { itemOf, nameOf, refOf, type ItemRef } from '../inventory/kinds.js';
import type { Rollout } from '../playbook/types.js';
import { parseDuration } from '../util/duration.js';
import { globMatcher } from '../util/glob.js';
import { orderVersions } from '../util/item-version.js';
import type { StagingTable } from '../inventory/staging-table.js';

/**
 * `rollout.staging_first`: each site's update runs on its staging environment first; the live
 * environment gets the same update (rerun, never pushed from staging) once a staging update of this
 * tool took that very version and its checks passed, no failure is recorded for it, and `soak` has
 * passed since. Only the run's own staging steps write the store (coord/staging-*.ts): a version on
 * staging that no staging step of this tool checked is never taken by live. A soaked version that
 * goes bad (flagged vulnerable, refused by the policy) is never skipped past unsaid: the newer one is
 * staged first, or with `rollout.security_bypass` goes to live unstaged, named so (judgeSuperseded).
 * This module judges, and reads no clock and no store: both are inputs.
 */

/** What became of one item update of one site under staging first. */
export type StagingCode =
  'staged' | 'promoted' | 'staging_bypassed' | 'staging_soaking' | 'staging_failed' | 'staging_mismatch' | 'staging_unchecked' | 'no_staging';

/** The item is named for its kind (`theme`, `plugin`: kinds.ts). */
export type StagingDecision = ItemRef & StagingFacts;

interface StagingFacts {
  code: StagingCode;
  /** The version the update moves to, on staging and then live. */
  version: string;
  /** The site's staging environment, where it has one. */
  staging?: { env_id: string; environment: string };
  /** Since when staging has run this version with no failure recorded (ISO 8601). */
  since?: string;
  /** When the soak ends and live may follow (ISO 8601). */
  until?: string;
  /** When its staging update failed (staging_failed). */
  failed_at?: string;
  /** Why the version is held: what failed on staging, or why it cannot be staged. */
  why?: string;
  /** What lets it through: the setting, or what a person does. */
  override?: string;
  /** The version staging soaked that live no longer takes (flagged vulnerable, or left alone by the task's policy): the newer one is judged instead. */
  soaked?: string;
}

/** The time staging is judged at and the store's table: inputs, like the plan's date. */
export interface StagingClock {
  now: number;
  table: StagingTable;
}

/** @default for `rollout.staging`: the environment of a site that is its staging copy, by name. */
export const DEFAULT_STAGING_NAME = 'staging';

/**
 * A fleet's staging environments by the task's rule (`rollout.staging`, a glob of names), indexed by
 * site (by its id: siteKey) once: a task over tens of thousands of environments looks each site up, never scans the fleet.
 */
export class StagingSites {
  readonly #isStaging: (name: string) => boolean;
  readonly #bySite = new Map<string, Environment[]>();

  constructor(inventory: Inventory, rollout: Rollout) {
    this.#isStaging = globMatcher(rollout.staging ?? DEFAULT_STAGING_NAME);
    for (const env of inventory.environments) {
      if (!this.#isStaging(env.name)) continue;
      const list = this.#bySite.get(siteKey(env)) ?? [];
      list.push(env);
      this.#bySite.set(siteKey(env), list);
    }
  }

  /** A staging environment (a selected one is staged through its live sibling, never updated as live). */
  isStaging(env: Environment): boolean {
    return this.#isStaging(env.name);
  }

  /** The site's staging environment: another environment of the same site whose name matches. */
  of(live: Environment): Environment | undefined {
    return this.#bySite.get(siteKey(live))?.find((e) => e.id !== live.id);
  }

  /** The staging environments of the sites of `selected`: what staging first writes to and checks. */
  ofSites(selected: readonly Environment[]): Environment[] {
    const found = new Map<string, Environment>();
    for (const env of selected) {
      const staging = this.isStaging(env) ? undefined : this.of(env);
      if (staging) found.set(staging.id, staging);
    }
    return [...found.values()];
  }
}

/**
 * A site's identity: its id, from the service's site listing (read once per plan where staging first
 * is used). Its display name only where the service serves no listing, and the command has refused
 * staging first for any display name that stands for two sites (app/prepare.ts).
 */
function siteKey(env: Environment): string {
  return env.site_id !== undefined ? `id:${env.site_id}` : `name:${env.site}`;
}

/** What one site's update comes to tonight: the items to stage, those live may take, and a decision for each. */
export interface StagingJudgement {
  stage: InstalledItem[];
  promote: InstalledItem[];
  decisions: StagingDecision[];
}

/**
 * Judges each update `live` would take (`wanted`, as the task's own policy allows it) against the
 * site's staging environment and the store. One rule per item, the most basic first: no staging
 * (rollout.no_staging), a failure recorded for this version on staging, staging not running it yet
 * (stage it, if staging is offered that very version), running it for less than the soak, or promote.
 * `superseded` names the items whose soaked version live no longer takes, with why (supersededSoak):
 * their newest version is judged as though nothing were soaked (judgeSuperseded).
 */
export function judgeStaged(
  site: { live: Environment; staging: Environment | undefined },
  wanted: readonly InstalledItem[],
  rollout: Rollout,
  clock: StagingClock,
  superseded: ReadonlyMap<string, string> = new Map(),
): StagingJudgement {
  const out: StagingJudgement = { stage: [], promote: [], decisions: [] };
  const { staging } = site;
  for (const item of wanted) {
    const soaked = staging && soakedOn(item, staging, clock.table);
    const reason = superseded.get(item.name);
    const decisions = soaked
      ? reason === undefined
        ? judgeSoaked(item, staging, soaked, rollout, clock)
        : judgeSuperseded(item, staging, { soaked, reason }, rollout, clock)
      : [staging ? judgeItem(item, staging, rollout, clock) : noStaging(item, site.live, rollout)];
    for (const decision of decisions) {
      out.decisions.push(decision);
      // Staging takes what it stages, and what live takes unstaged where it is offered it: it does not stay on a flagged version.
      if (decision.code === 'staged' || (decision.code === 'staging_bypassed' && offers(onStagingOf(item, staging!), decision.version)))
        out.stage.push(onStagingOf(item, staging!)!);
      // Live takes the very version staging soaked (pinned), whatever is newest tonight.
      if (decision.code === 'promoted') out.promote.push(towards(item, soaked));
      // The newest, unstaged: what rollout.security_bypass lets live take over a soaked version flagged vulnerable.
      if (decision.code === 'staging_bypassed') out.promote.push(item);
      // `no_staging: live` is for a site with no staging environment, never for one whose staging cannot take the version.
      if (decision.code === 'no_staging' && !staging && rollout.no_staging === 'live') out.promote.push(item);
    }
  }
  return out;
}

/** Whether live takes the decision's very version tonight (promoted, bypassed, or a site with no staging updated on live). */
export function liveTakes(d: StagingDecision, promote: readonly InstalledItem[]): boolean {
  return promote.some((t) => t.kind === itemOf(d)?.kind && t.name === nameOf(d) && t.update_version === d.version);
}

/**
 * Why live no longer takes the version staging soaked, but the newest it is offered: the listing flags
 * the soaked one vulnerable and not the newest, or the task's policy now leaves the soaked one alone
 * (`refused`, the policy's words), while the policy sends the newest (`sendsNewest`). Undefined where
 * live still waits for the soaked version and then takes it. The policy is the planner's to ask: this
 * module judges none of its own.
 */
export function supersededSoak(item: InstalledItem, soaked: Soaked | undefined, policy: { sendsNewest: boolean; refused?: string }): string | undefined {
  if (!soaked || soaked.version === item.update_version || !policy.sendsNewest) return undefined;
  if (soaked.vulnerable && !item.update_vulnerable) return 'is now flagged vulnerable';
  return policy.refused === undefined ? undefined : `no longer passes the task's policy (${policy.refused})`;
}

/** A version staging ran and checked for live to move to: newer than live's, no newer than live is offered. */
export interface Soaked {
  version: string;
  /** Since when staging has run it with no failure recorded. */
  since: number;
  /** The listing flags it vulnerable on staging. */
  vulnerable: boolean;
}

/**
 * What staging runs of `theme`, when a staging update of this tool took it and checked it (a healthy
 * record, no failure), and live would move up to it: newer than live's version and no newer than the
 * one live is offered. Live waits for this version and then takes it, even when a newer one came out
 * meanwhile: staging does not move on to the newer one before live followed, so a theme that releases
 * faster than the soak still reaches live, one soaked version after another.
 */
export function soakedOn(item: InstalledItem, staging: Environment, table: StagingTable): Soaked | undefined {
  const onStaging = onStagingOf(item, staging);
  if (!onStaging || onStaging.version === item.version) return undefined;
  const version = onStaging.version;
  if (version !== item.update_version) {
    const [above, below] = [orderVersions(version, item.version), orderVersions(version, item.update_version)];
    if (above === undefined || below === undefined || above <= 0 || below >= 0) return undefined;
  }
  const record = table.get(staging.id, item, version);
  if (record?.healthy === undefined || record.failed) return undefined;
  return { version, since: record.healthy, vulnerable: onStaging.version_vulnerable };
}

/** Live's theme as it would move to what staging soaked: that version, pinned, in place of the newest offered. */
export function towards(item: InstalledItem, soaked: Soaked | undefined): InstalledItem {
  return soaked && soaked.version !== item.update_version ? { ...item, update_version: soaked.version, update_vulnerable: soaked.vulnerable } : item;
}

/**
 * Live behind a version staging soaked: it waits for the soak, then takes that version; and the night it
 * does, staging stages the newer one live is offered, if staging is offered it too.
 */
function judgeSoaked(item: InstalledItem, staging: Environment, soaked: Soaked, rollout: Rollout, { now }: StagingClock): StagingDecision[] {
  const base = {
    ...refOf(item.kind, item.name),
    version: soaked.version,
    staging: { env_id: staging.id, environment: staging.name },
    since: iso(soaked.since),
  };
  const soakMs = parseDuration(rollout.soak ?? '0s') ?? 0;
  if (now - soaked.since < soakMs) return [{ ...base, code: 'staging_soaking', until: iso(soaked.since + soakMs), override: 'a shorter rollout.soak' }];
  const promoted: StagingDecision = { ...base, code: 'promoted' };
  const onStaging = onStagingOf(item, staging)!;
  const next = item.update_version;
  if (next === soaked.version || !onStaging.update_available || onStaging.update_version !== next) return [promoted];
  const { since: _since, ...stagingOf } = base;
  return [promoted, { ...stagingOf, version: next, code: 'staged', override: 'rollout.staging_first: false sends it to live at once' }];
}

/**
 * Live behind a soaked version it no longer takes (supersededSoak says why): the newest is judged as
 * though nothing were soaked (staged tonight where staging is offered it), and live waits for it, told
 * why and what sends it sooner. Under rollout.security_bypass, where the soaked version is flagged
 * vulnerable and the newest is not, live takes the newest unstaged, and staging takes it the same
 * night where it is offered it (one decision for both: judgeStaged stages it); never a version that
 * failed on staging.
 */
function judgeSuperseded(
  item: InstalledItem,
  staging: Environment,
  { soaked, reason }: { soaked: Soaked; reason: string },
  rollout: Rollout,
  clock: StagingClock,
): StagingDecision[] {
  const fresh: StagingDecision = { ...judgeItem(item, staging, rollout, clock), soaked: soaked.version };
  if (fresh.code === 'staging_failed') return [fresh];
  if (rollout.security_bypass === true && soaked.vulnerable && !item.update_vulnerable) {
    const why = `${soaked.version} soaked on ${staging.name} is flagged vulnerable`;
    return [{ ...fresh, code: 'staging_bypassed', why, override: 'rollout.security_bypass: false stages it first' }];
  }
  const why = `${item.name} ${soaked.version} soaked on ${staging.name} ${reason}`;
  if (fresh.code !== 'staged') return [{ ...fresh, why: `${why}; ${fresh.why}` }];
  const sooner = soaked.vulnerable ? { override: `rollout.security_bypass: true sends ${item.update_version} to live unstaged` } : {};
  return [{ ...fresh, why, ...sooner }];
}

function noStaging(item: InstalledItem, live: Environment, rollout: Rollout): StagingDecision {
  const live_ = rollout.no_staging === 'live';
  return {
    code: 'no_staging',
    ...refOf(item.kind, item.name),
    version: item.update_version,
    why: `the site has no environment named ${rollout.staging ?? DEFAULT_STAGING_NAME}${live_ ? ': updated on live directly (rollout.no_staging: live)' : ''}`,
    ...(live_ ? {} : { override: 'rollout.no_staging: live updates such sites directly' }),
  };
}

function judgeItem(item: InstalledItem, staging: Environment, rollout: Rollout, { now, table }: StagingClock): StagingDecision {
  const version = item.update_version;
  const base = { ...refOf(item.kind, item.name), version, staging: { env_id: staging.id, environment: staging.name } };
  const record = table.get(staging.id, item, version);
  if (record?.failed)
    return {
      ...base,
      code: 'staging_failed',
      failed_at: iso(record.failed.at),
      why: record.failed.why,
      override: 'none by this rule: a newer version is staged afresh; a person who mended staging can update live by hand',
    };
  const onStaging = onStagingOf(item, staging);
  if (onStaging?.version !== version) {
    if (offers(onStaging, version)) return { ...base, code: 'staged', override: 'rollout.staging_first: false sends it to live at once' };
    const runs = `${staging.name} runs ${item.name} ${onStaging?.version ?? '(not installed)'} and is not offered ${version}`;
    return mismatch({ ...base, code: 'staged' }, `${runs}, so it cannot be staged`);
  }
  if (record?.healthy === undefined)
    return {
      ...base,
      code: 'staging_unchecked',
      why: `${staging.name} runs ${version}, but no staging update of sitefleet took it and checked it (put there by hand, or its record was lost)`,
      override: "put staging back on live's version so that a run stages and checks it, or update live by hand",
    };
  const soakMs = parseDuration(rollout.soak ?? '0s') ?? 0;
  const since = record.healthy;
  if (now - since < soakMs) return { ...base, code: 'staging_soaking', since: iso(since), until: iso(since + soakMs), override: 'a shorter rollout.soak' };
  return { ...base, code: 'promoted', since: iso(since) };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** A version staging cannot take (another version there, or the task's policy leaves it alone there): live waits. */
export function mismatch(d: StagingDecision, why: string): StagingDecision {
  return { ...d, code: 'staging_mismatch', why, override: `bring staging to the same ${itemOf(d)!.kind} and version as live, within the task's policy` };
}

/** The decision in words, for a step's note or a skip's reason: code first, so a reader and a grep find it. */
export function stagingWords(d: StagingDecision): string {
  const what = `${nameOf(d)} ${d.version}`;
  switch (d.code) {
    case 'staged':
      // Staged in place of a soaked version live no longer takes: why, and what sends it sooner.
      return `staged: ${what} goes to ${d.staging!.environment} first; live follows on a run after the soak${d.soaked && d.why ? ` (${d.why}; ${d.override})` : ''}`;
    case 'promoted':
      return `promoted: ${what} has run on ${d.staging?.environment ?? 'staging'} since ${d.since}`;
    case 'staging_bypassed':
      return `staging_bypassed: ${what} goes to live unstaged: ${d.why} (rollout.security_bypass)`;
    case 'staging_soaking':
      return `staging_soaking: ${what} on ${d.staging!.environment} since ${d.since}; live after ${d.until} (${d.override})`;
    case 'staging_mismatch':
      return `staging_mismatch: ${what} cannot be staged on ${d.staging!.environment} (${d.override})`;
    case 'staging_unchecked':
      return `staging_unchecked: ${what} is on ${d.staging!.environment} unchecked; live keeps its version (${d.override})`;
    case 'staging_failed':
      return `staging_failed: ${what} failed on ${d.staging!.environment} at ${d.failed_at}; live keeps its version (${d.override})`;
    case 'no_staging':
      return `no_staging: ${what}: ${d.why}${d.override ? ` (${d.override})` : ''}`;
  }
}

/** Whether the item, as installed, is offered that very version. */
function offers(item: InstalledItem | undefined, version: string): boolean {
  return item?.update_available === true && item.update_version === version;
}

/** The same item on the site's staging environment, if installed there. */
function onStagingOf(item: InstalledItem, staging: Environment): InstalledItem | undefined {
  return installedOf(staging, item.kind).find((t) => t.name === item.name);
}

/** An environment as one of its updates' judgements lets the action see it: of the items' kind, only `items` still offered. */
export function offering(env: Environment, items: readonly InstalledItem[]): Environment {
  const kind = items[0]?.kind;
  if (kind === undefined)
    return { ...env, items: Object.fromEntries(Object.entries(env.items).map(([k, list]) => [k, list.map((t) => ({ ...t, update_available: false }))])) };
  // The items as given: a promoted one offers the version staging soaked, not the newest.
  const byName = new Map(items.map((t) => [t.name, t]));
  return { ...env, items: { ...env.items, [kind]: installedOf(env, kind).map((t) => byName.get(t.name) ?? { ...t, update_available: false }) } };
}
