import { isIP } from 'node:net';
import type { InputProblem } from '../errors.js';
import { nameRefusal } from './http/address.js';
import { durationSchema, LONGEST, parseDuration } from '../util/duration.js';
import { resolveVisual, visualSchema, type VisualInput, type VisualSpec } from './visual/spec.js';

/**
 * A task's `health:` as the playbook gives it: `true` for every default, or an object. The checks
 * are requests to the sites themselves, never to the API.
 */
export interface HealthInput {
  /** `{{domain}}`, `{{site}}`, `{{env}}`, `{{env_id}}` are filled per environment. @default "https://{{domain}}/" */
  url?: string;
  /** Statuses that count as healthy: `200-399`, `200,204,301-302`. @default "200-399" */
  status?: string | number;
  /** Texts whose presence in the page means it is broken. @default DEFAULT_NOT_CONTAINS */
  not_contains?: string[];
  /** For one attempt, redirects and page included. @default "15s" */
  timeout?: string;
  /** Tries before a site counts as unhealthy: a site may take a moment after an update. @default 3 */
  attempts?: number;
  /** Wait between attempts. @default "5s" */
  interval?: string;
  /** Checks in flight at once for the task (its own bound, not the API's). @default 8 */
  concurrency?: number;
  /** Globs: the environment's first domain matching one is `{{domain}}`. @default its first domain */
  domain?: string | string[];
  /** An environment with no domain to check: not updated (`skip`), or a failed step that counts against the budget (`fail`). @default "skip" */
  on_missing_domain?: 'skip' | 'fail';
  /**
   * Sites whose names resolve to addresses inside a network (private, loopback, link-local, …) may be
   * checked: for a fleet on a private network. An IP address written in `url` is allowed without it.
   * @default false
   */
  allow_private?: boolean;
  /**
   * A site healthy before the write and broken after its operation: left as it is (`leave`), or put
   * back from the restore point this run took for it (`restore`, which needs `backup_first`). A
   * restore loses what changed on the site since its backup. `isolate`: restore, then send the
   * write's updates again in rounds to find the one that broke the site, keeping the others
   * (run/life/isolation.ts). @default "leave"
   */
  on_broken?: 'leave' | 'restore' | 'isolate';
  /**
   * How `on_broken: restore` puts a broken site back: `items_first` puts back the versions the write
   * replaced by their own files through WP-CLI (`wp plugin install <slug> --version=<old> --force`),
   * clears the cache and looks again, and restores the backup only when the site is still broken; it
   * never rolls back the site's data by itself. `backup` restores the backup at once (files and
   * database, consistent with each other; what changed since is lost). @default "backup"
   */
  undo?: 'items_first' | 'backup';
  /**
   * A site whose page cannot be seen healthy before the write (no answer, or an answer that is not
   * healthy): no write (`hold`: the step is held, `unseen` or `broken_before`, and counts against the
   * failure budget), or the write goes and the site is listed as broken before, not blamed (`update`).
   * @default "hold"
   */
  when_broken_before?: 'hold' | 'update';
  /** Screenshots before and after the write, compared (see visual/spec.ts). */
  visual?: true | VisualInput;
  /**
   * Clear the environment's page cache through the service after the write and before any look
   * after it, so that the check sees the page visitors will get, not the one an edge cache or CDN
   * kept from before the write. @default true
   */
  clear_cache?: boolean;
}

/** `health:` with every default filled in: what the plan carries. */
export interface HealthSpec {
  url: string;
  status: [number, number][];
  not_contains: string[];
  timeout_ms: number;
  attempts: number;
  interval_ms: number;
  concurrency: number;
  domain?: string[];
  on_missing_domain: 'skip' | 'fail';
  /** Present only when the playbook says so: a plan without it is the same plan as before the option. */
  allow_private?: true;
  /** Likewise present only when the playbook asks for it. */
  on_broken?: 'restore' | 'isolate';
  /** Likewise: a plan without it restores the backup at once (see `undoesByItems`). */
  undo?: 'items_first';
  /** Likewise present only when the playbook asks for it: a plan without it holds (see `updatesBrokenBefore`). */
  when_broken_before?: 'update';
  /** Likewise: a plan without it is the same plan as before the option. */
  visual?: VisualSpec;
  /** `false` only when the playbook turns the cache clear off: a plan without it clears (see `clearsCache`). */
  clear_cache?: false;
}

/** Whether a guarded write of this task is sent to a site whose page was not seen healthy before it (`when_broken_before: update`). */
export function updatesBrokenBefore(spec: HealthSpec): boolean {
  return spec.when_broken_before === 'update';
}

/**
 * Whether a site this task's write broke is put back by the items' own files before any restore
 * (`undo: items_first`, with `on_broken: restore` or `isolate`, whose rounds go back so too).
 */
export function undoesByItems(spec: HealthSpec): boolean {
  return spec.undo === 'items_first' && (spec.on_broken === 'restore' || spec.on_broken === 'isolate');
}

/** Whether a guarded write of this task clears its environment's page cache before the look after it. */
export function clearsCache(spec: HealthSpec): boolean {
  return spec.clear_cache !== false;
}

/**
 * What a broken WordPress site shows: the critical-error page (WordPress 5.2+), PHP's own fatal
 * error as `display_errors` prints it in HTML, and the database error page. A site in another
 * language shows these translated: add its text to `not_contains`.
 */
export const DEFAULT_NOT_CONTAINS = ['There has been a critical error on this website', '<b>Fatal error</b>:', 'Error establishing a database connection'];

export const HEALTH_DEFAULTS = {
  url: 'https://{{domain}}/',
  status: '200-399',
  timeout: '15s',
  attempts: 3,
  interval: '5s',
  concurrency: 8,
  on_missing_domain: 'skip',
} as const;

/** Redirects followed (only on the same host) before a page counts as unreachable. */
export const MAX_REDIRECTS = 5;

export const HEALTH_TEMPLATE_NAMES = ['domain', 'site', 'env', 'env_id'];

/** The JSON Schema of `health:` in a playbook. */
export function healthSchema(): Record<string, unknown> {
  return {
    description: 'after the write, fetch the site and fail the step if it is broken; `true` for the defaults',
    oneOf: [
      { const: true },
      {
        type: 'object',
        additionalProperties: false,
        properties: {
          url: {
            type: 'string',
            minLength: 1,
            description: `the page to fetch, default ${HEALTH_DEFAULTS.url}; templates: {{domain}}, {{site}}, {{env}}, {{env_id}}`,
          },
          status: {
            description: `healthy statuses, default ${HEALTH_DEFAULTS.status}`,
            oneOf: [
              { type: 'integer', minimum: 100, maximum: 599 },
              { type: 'string', pattern: '^\\s*[1-5][0-9]{2}(\\s*-\\s*[1-5][0-9]{2})?(\\s*,\\s*[1-5][0-9]{2}(\\s*-\\s*[1-5][0-9]{2})?)*\\s*$' },
            ],
          },
          not_contains: {
            type: 'array',
            items: { type: 'string', minLength: 1 },
            description: 'texts that mean the page is broken (default: WordPress’s critical error, PHP’s fatal error, the database error)',
          },
          timeout: durationSchema(LONGEST.healthTimeout, `one attempt, default ${HEALTH_DEFAULTS.timeout}`),
          attempts: { type: 'integer', minimum: 1, maximum: 10, description: `tries before a site counts as unhealthy, default ${HEALTH_DEFAULTS.attempts}` },
          interval: durationSchema(LONGEST.healthInterval, `wait between attempts, default ${HEALTH_DEFAULTS.interval}`),
          concurrency: { type: 'integer', minimum: 1, maximum: 256, description: `checks at once, default ${HEALTH_DEFAULTS.concurrency}` },
          domain: {
            description: 'the first domain matching this glob (or one of these) is {{domain}}; default the first domain',
            oneOf: [
              { type: 'string', minLength: 1 },
              { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
            ],
          },
          on_missing_domain: {
            enum: ['skip', 'fail'],
            description: 'an environment with no domain (or one sitefleet refuses to check): not updated (skip, default), or a failed step (fail)',
          },
          allow_private: {
            type: 'boolean',
            description: 'check sites whose names resolve to private, loopback or link-local addresses (default false: they are refused)',
          },
          on_broken: {
            enum: ['leave', 'restore', 'isolate'],
            description:
              'a site healthy before and broken after the write: leave it (default), restore the backup this run took first (needs backup_first; loses what changed on the site since), or restore and then send its updates again in rounds to find the one that broke it, keeping the others (isolate)',
          },
          undo: {
            enum: ['items_first', 'backup'],
            description:
              "how on_broken: restore or isolate puts a broken site back: the versions the write replaced, by their own files through WP-CLI, then the backup only if the site is still broken (items_first: the site's data is kept; isolation's rounds go back by their items' files too and take no backups), or the backup at once (backup, default: files and database put back together; what changed on the site since the backup is lost)",
          },
          when_broken_before: {
            enum: ['hold', 'update'],
            description:
              'a site whose page is not seen healthy before the write (no answer: DNS, refused, timeout; or an error page): no write, the step held and counted against max_failures (hold, default), or the write goes and the site is listed as broken before, not blamed (update)',
          },
          visual: visualSchema(),
          clear_cache: {
            type: 'boolean',
            description:
              "clear the environment's page cache through the service after the write and before the check after it, so the check sees what visitors will (default true)",
          },
        },
      },
    ],
  };
}

/** `200-399,404` → [[200, 399], [404, 404]]. */
export function parseStatusRanges(text: string | number): [number, number][] {
  return String(text)
    .split(',')
    .map((part) => {
      const [a, b = a] = part.split('-').map((n) => Number(n.trim()));
      return [a!, b!];
    });
}

/** The spec a playbook's `health:` stands for, or the problems in it (paths relative to `health`). */
export function resolveHealth(input: true | HealthInput): { spec?: HealthSpec; problems: InputProblem[] } {
  const given = input === true ? {} : input;
  const problems: InputProblem[] = [];
  const url = given.url ?? HEALTH_DEFAULTS.url;
  for (const m of url.matchAll(/\{\{\s*([^}\s]*)\s*\}\}/g))
    if (!HEALTH_TEMPLATE_NAMES.includes(m[1]!))
      problems.push({ path: 'url', message: `unknown template ${m[0]}; known: ${HEALTH_TEMPLATE_NAMES.map((n) => `{{${n}}}`).join(', ')}` });
  const probe = url.replace(/\{\{[^}]*\}\}/g, 'x');
  if (!/^https?:\/\/[^/]/i.test(probe) || !URL.canParse(probe))
    problems.push({ path: 'url', message: `${JSON.stringify(url)} is not an http:// or https:// URL` });
  const status = parseStatusRanges(given.status ?? HEALTH_DEFAULTS.status);
  if (status.some(([a, b]) => b < a)) problems.push({ path: 'status', message: 'a range must go up, e.g. 200-399' });
  const visual = given.visual === undefined ? undefined : resolveVisual(given.visual);
  problems.push(...(visual?.problems ?? []).map((p) => ({ ...p, path: `visual.${p.path}` })));
  if (problems.length > 0) return { problems };
  return {
    problems,
    spec: {
      url,
      status,
      not_contains: given.not_contains ?? DEFAULT_NOT_CONTAINS,
      timeout_ms: parseDuration(given.timeout ?? HEALTH_DEFAULTS.timeout)!,
      attempts: given.attempts ?? HEALTH_DEFAULTS.attempts,
      interval_ms: parseDuration(given.interval ?? HEALTH_DEFAULTS.interval)!,
      concurrency: given.concurrency ?? HEALTH_DEFAULTS.concurrency,
      ...(given.domain === undefined ? {} : { domain: [given.domain].flat() }),
      on_missing_domain: given.on_missing_domain ?? HEALTH_DEFAULTS.on_missing_domain,
      ...(given.allow_private === true ? { allow_private: true as const } : {}),
      ...(given.on_broken === 'restore' || given.on_broken === 'isolate' ? { on_broken: given.on_broken } : {}),
      ...(given.undo === 'items_first' ? { undo: 'items_first' as const } : {}),
      ...(given.when_broken_before === 'update' ? { when_broken_before: 'update' as const } : {}),
      ...(visual?.spec ? { visual: visual.spec } : {}),
      ...(given.clear_cache === false ? { clear_cache: false as const } : {}),
    },
  };
}

export function usesDomain(spec: HealthSpec): boolean {
  return /\{\{\s*domain\s*\}\}/.test(spec.url);
}

/** A host name as DNS allows it: a domain the service lists is text from outside, checked before it goes into a URL. */
const HOST_NAME = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/**
 * The URL to check for one environment. Names from the service go in percent-encoded (a site name
 * cannot add a path, a query or another host), and a domain only if it is a host name on the
 * internet: not an IP address in any notation, not `localhost` (see http/address.ts). A host built from
 * the service's names is held to the same rule.
 */
export function healthUrl(spec: HealthSpec, values: { domain?: string; site: string; env: string; env_id: string }): { url: string } | { problem: string } {
  if (values.domain !== undefined) {
    if (!HOST_NAME.test(values.domain)) return { problem: `domain ${JSON.stringify(values.domain)} is not a host name` };
    const why = nameRefusal(values.domain);
    if (why) return { problem: `domain ${JSON.stringify(values.domain)} ${why}, not a host on the internet` };
  }
  const text = spec.url.replace(/\{\{\s*([a-z_]+)\s*\}\}/g, (_, name: string) => {
    if (name === 'domain') return values.domain ?? '';
    return encodeURIComponent(name === 'site' ? values.site : name === 'env' ? values.env : values.env_id);
  });
  if (!URL.canParse(text)) return { problem: `${JSON.stringify(text)} is not a URL` };
  const url = new URL(text);
  const why = hostFromService(spec.url) ? nameRefusal(url.hostname) : undefined;
  if (why) return { problem: `host ${JSON.stringify(url.hostname)} (from the service's names) ${why}, not a host on the internet` };
  return { url: url.href };
}

/** Stands for a template's value while its URL is read: no host name the service could give contains it. */
const PLACEHOLDER = 'sitefleet--template--value';

/** True when a template fills the URL's host: the host is then the service's text, not the playbook's. */
export function hostFromService(template: string): boolean {
  const filled = template.replace(/\{\{[^}]*\}\}/g, PLACEHOLDER);
  return !URL.canParse(filled) || new URL(filled).hostname.includes(PLACEHOLDER);
}

/**
 * The IP address the playbook's own `url` names as its host (`127.0.0.1`, `[::1]`), as a URL reads
 * it: the author's choice, so checks may reach it whatever it is. Undefined for a name or a template.
 */
export function literalAddress(template: string): string | undefined {
  if (hostFromService(template)) return undefined;
  const host = new URL(template.replace(/\{\{[^}]*\}\}/g, PLACEHOLDER)).hostname;
  return isIP(host.replace(/^\[|\]$/g, '')) ? host : undefined;
}

/**
 * `127.0.0.1:8080`: the address and port of `url` (a page of the check) when the playbook's own
 * `health.url` template names that address; undefined when its host is a name or the service's.
 */
export function namedAddress(url: string, template: string): string | undefined {
  const at = new URL(url);
  if (at.hostname !== literalAddress(template)) return undefined;
  return `${at.hostname}:${at.port || (at.protocol === 'https:' ? '443' : '80')}`;
}
