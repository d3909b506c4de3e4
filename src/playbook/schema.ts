import { restoreFrom } from '../actions/backups-restore.js';
import { HH_MM } from '../util/time-window.js';
import { ACTIONS, guardable, verifiable } from '../actions/index.js';
import type { Action } from '../actions/action.js';
import { healthSchema } from '../health/spec.js';
import { commonDef, globs, secretRef } from '../actions/schema-parts.js';
import { ageSchema, durationSchema, LONGEST, LONGEST_AGE } from '../util/duration.js';
import { DEFAULT_RETRY_BACKOFF } from '../inventory/withheld.js';

export const PLAYBOOK_SCHEMA_ID = 'https://sitefleet.dev/schemas/playbook.schema.json';

const envRef = { type: 'string', pattern: '^\\$\\{[A-Za-z_][A-Za-z0-9_]*\\}$' };
export const RATE_PATTERN = '^\\s*[1-9][0-9]*\\s*/\\s*[0-9]*\\s*(ms|s|sec|second|m|min|minute|h|hour)\\s*$';
const share = { type: 'string', pattern: '^(100|[1-9]?[0-9])(\\.[0-9]+)?%$' };
const budget = {
  description: 'failures allowed per task before the run stops: a count, or a percentage of the task’s targets',
  oneOf: [
    { type: 'integer', minimum: 0 },
    { type: 'string', pattern: '^(100|[0-9]{1,2})(\\.[0-9]+)?%$' },
  ],
};

/**
 * The playbook's JSON Schema, assembled from the actions: each action's `with:` schema applies when
 * a task names that action. `schemas/playbook.schema.json` is this, written out for editors (a test
 * keeps the two equal; `npm run schemas` rewrites the file).
 */
export function playbookSchema(): Record<string, unknown> {
  const actions = [...ACTIONS.values()];
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: PLAYBOOK_SCHEMA_ID,
    title: 'sitefleet playbook',
    type: 'object',
    additionalProperties: false,
    required: ['version', 'name', 'tasks'],
    properties: {
      version: { const: 1, description: 'playbook format version' },
      name: { type: 'string', minLength: 1 },
      company: { description: 'company UUID, or a ${ENV_VAR} reference; --company overrides it', anyOf: [commonDef('uuid'), envRef] },
      sites: {
        type: 'object',
        description: 'site display name → site id (UUID): the theme listing carries no site ids; --sites FILE adds to these',
        additionalProperties: commonDef('uuid'),
      },
      settings: settingsSchema(),
      targets: {
        type: 'object',
        description: 'named selectors',
        propertyNames: { pattern: '^[A-Za-z][A-Za-z0-9_-]*$', not: { const: 'all' } },
        additionalProperties: { $ref: '#/$defs/selector' },
      },
      tasks: { type: 'array', minItems: 1, items: { $ref: '#/$defs/task' } },
    },
    $defs: {
      selector: {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        description: 'environments whose fields match every given entry (each a glob or a list of globs), minus `exclude`',
        properties: {
          site: { ...globs, description: 'site display name' },
          environment: { ...globs, description: 'environment display name' },
          theme: { ...globs, description: 'has a theme with this slug installed' },
          plugin: { ...globs, description: 'has a plugin with this slug installed (the plan reads the plugin listing)' },
          core: { ...globs, description: 'runs a WordPress version matching this (6.4*; the plan reads the site listing)' },
          ids: { type: 'array', minItems: 1, items: commonDef('uuid'), description: 'environment UUIDs' },
          exclude: { $ref: '#/$defs/selector' },
        },
      },
      task: taskSchema(actions),
    },
  };
}

/** `settings:`, for the whole playbook: the rate budget, files, waiting, the window, the channels, the lock. */
function settingsSchema(): Record<string, unknown> {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      rate_limit: { type: 'string', pattern: RATE_PATTERN, description: 'the API budget every task shares: N/s, N/min or N/10s' },
      manual_backup_slots: {
        type: 'integer',
        minimum: 1,
        maximum: 1000,
        description:
          "the most manual backups the service keeps an environment (default 5: the real service's, shared/real-service-notes.md); before a backup, older ones sitefleet made (its tags) are removed to make room, never a person's: with every slot a person's, the step is held (no_backup_slot)",
      },
      create_rate_limit: {
        type: 'string',
        pattern: RATE_PATTERN,
        description:
          "the service's own limit on calls that create something (sites, environments, backups, domains, DNS records), e.g. 5/min; learned from 429s when not given",
      },
      headroom: {
        type: 'number',
        minimum: 0,
        maximum: 0.9,
        description: 'share of the rate window left free for other clients of the API key (default 0)',
      },
      allowed_files: {
        type: 'array',
        items: { type: 'string', pattern: '^/', description: 'an absolute path' },
        description:
          "files outside the playbook's folder that it may name (ip_list_file); others are refused, so a changed playbook cannot read any file the runner can",
      },
      not_found_grace: durationSchema(
        LONGEST.notFoundGrace,
        'how long a new operation may be unknown to the service (404) before it counts as lost (default 60s)',
      ),
      concurrency: { type: 'integer', minimum: 1, maximum: 256 },
      visual_concurrency: {
        type: 'integer',
        minimum: 1,
        maximum: 16,
        description: 'health.visual: pages the one browser loads and shoots at once, across the run (default 2): each is a few hundred MB',
      },
      visual_sandbox: {
        type: 'boolean',
        description:
          'health.visual: false runs Chromium without its sandbox (default true); for root containers, where Chromium cannot start it. A run that uses it says so',
      },
      max_failures: budget,
      report_dir: { type: 'string', minLength: 1 },
      wait: { type: 'boolean', description: 'poll every operation until it finished (succeeded or failed)' },
      wait_timeout: durationSchema(LONGEST.operationWait, 'how long to wait for one operation (default 30m)'),
      finish_within: durationSchema(
        LONGEST.operationWait,
        'after a stop (a crossed failure budget, the window, the first Ctrl-C), how long the writes already sent may take to finish their lives: follow, cache clear, look, restore, isolation rounds (default 30m); past it they stop where they stand and `sitefleet resume` finishes them',
      ),
      operation_path: { type: 'string', pattern: '^/.*\\{operation_id\\}', description: 'operation status endpoint (default /operations/{operation_id})' },
      window: windowSchema(),
      restore: restoreFrom.settingsSchema,
      ping: secretRef('a healthchecks-style ping URL (URL/start as the run starts, URL/<exit code> as it ends)'),
      notify: notifySchema(),
      metrics_file: {
        type: 'string',
        minLength: 1,
        description: 'write the run’s metrics there in Prometheus’ text format (for node_exporter’s textfile collector); --metrics-file overrides it',
      },
      retry_backoff: {
        type: 'array',
        minItems: 1,
        maxItems: 16,
        items: ageSchema(LONGEST_AGE.retryBackoff, 'a wait'),
        description: `how long an item update that failed for a reason that may pass (a 5xx, a timeout, a site down before the write) waits on its environment before it is sent again: after the 1st, 2nd… failure in a row, the last repeating (default [${DEFAULT_RETRY_BACKOFF.join(', ')}]); \`sitefleet retry clear\` lets one go at once`,
      },
      lock: {
        enum: ['company', 'playbook'],
        description:
          'one run at a time per company (default), or per playbook name per company: runs of different playbooks may then go together (share their rate budget with --coordination)',
      },
    },
  };
}

/** `settings.window`: the daily maintenance window. */
function windowSchema(): Record<string, unknown> {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['start', 'end'],
    description:
      'the daily maintenance window: a run sends writes only inside it (outside: exit 5, or --wait-window); an end at or before the start crosses midnight',
    properties: {
      start: { type: 'string', pattern: HH_MM.source, description: 'HH:MM, wall-clock time in timezone' },
      end: { type: 'string', pattern: HH_MM.source, description: 'HH:MM: no write is sent after it' },
      timezone: { type: 'string', minLength: 1, description: 'IANA zone such as Europe/Berlin (default: the machine’s, or TZ)' },
    },
  };
}

/** `settings.notify`: the webhooks told of a run's end. */
function notifySchema(): Record<string, unknown> {
  return {
    type: 'array',
    minItems: 1,
    description: 'webhooks told of the run’s end, after its report is written; a failure to deliver never changes the exit code',
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      properties: {
        url: secretRef('the webhook URL'),
        on: {
          enum: ['failure', 'always', 'success', 'change'],
          description: 'failure (exit ≠ 0, the default), always, success (exit 0), or change (an exit code other than the previous run of this playbook)',
        },
        format: { enum: ['json', 'slack'], description: 'json (default): a summary of the run; slack: an incoming-webhook message (text and blocks)' },
        secret: secretRef('the key of an HMAC-SHA256 signature of the body (header X-Sitefleet-Signature: sha256=<hex>)'),
      },
    },
  };
}

/** A task: its action, target and guards; the action's own `with:` schema applies when the task names it. */
function taskSchema(actions: Action[]): Record<string, unknown> {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'action'],
    properties: {
      name: { type: 'string', minLength: 1 },
      action: { enum: actions.map((a) => a.name) },
      target: {
        description: '"all", the name of a selector under `targets`, or an inline selector',
        oneOf: [{ type: 'string', minLength: 1 }, { $ref: '#/$defs/selector' }],
      },
      with: { type: 'object' },
      allow_empty: { type: 'boolean', description: 'a target that matches nothing is not an error' },
      max_failures: budget,
      wait: { type: 'boolean', description: 'poll this task’s operations until they finished' },
      timeout: durationSchema(LONGEST.operationWait, 'how long to wait for one operation of this task'),
      verify: {
        type: 'boolean',
        description: `${verifiable().join(', ')}: also fail steps whose items the read-back listing still shows an update available for (every item write is read back whatever this says; false does not turn that off)`,
      },
      health: { ...healthSchema(), description: `${guardable().join(', ')}: ${String(healthSchema().description)}; implies wait` },
      backup_first: {
        description: `${guardable().join(', ')}: a manual backup of each environment first (tag sitefleet-before-<task>-<date>); the write waits for it, and a failed backup means no write there; implies wait. Removed once its write was judged healthy (a write not healthy keeps it); {keep: N} keeps the task's newest N. With settings.manual_backup_slots taken, older backups sitefleet made are removed first, never a person's`,
        oneOf: [
          { type: 'boolean' },
          {
            type: 'object',
            additionalProperties: false,
            required: ['keep'],
            properties: {
              keep: {
                type: 'integer',
                minimum: 0,
                maximum: 50,
                description: "the task's newest restore points that stay on each environment once judged healthy",
              },
            },
          },
        ],
      },
      rollout: {
        type: 'object',
        additionalProperties: false,
        description: 'canary first, then waves, each started only when the one before ended within the failure budget; implies wait',
        properties: {
          canary: { type: 'integer', minimum: 0 },
          waves: { type: 'array', minItems: 1, items: share },
          pause: durationSchema(LONGEST.rolloutPause, 'the wait between one wave and the next'),
          staging_first: { type: 'boolean', description: "each site's update runs on its staging environment first; live is updated on a later run" },
          soak: ageSchema(LONGEST_AGE.stagingSoak, 'with staging_first: how long staging runs a version before live takes it (default 0s: the next run)'),
          no_staging: { enum: ['hold', 'live'], description: 'with staging_first: a site without staging is held (default) or updated on live' },
          staging: { type: 'string', minLength: 1, description: 'with staging_first: the name (glob) of the staging environment (default staging)' },
          security_bypass: {
            type: 'boolean',
            description:
              'with staging_first: where the version staging soaked is flagged vulnerable and a newer one not flagged is offered, live takes the newer one unstaged, the same run as staging (default false: the newer one is staged first and soaks; live waits)',
          },
          together: {
            type: 'string',
            minLength: 1,
            description: `the name of an earlier task updating another kind of item (${actions
              .filter((a) => a.items !== undefined)
              .map((a) => a.name)
              .join(
                ', ',
              )}): where both write to an environment, this task's writes join that task's, with one backup before both, one look after both and one restore of both; its health and backup_first are that task's`,
          },
        },
      },
    },
    allOf: actions.map((a) => ({
      if: { properties: { action: { const: a.name } }, required: ['action'] },
      then: { properties: { with: a.withSchema }, ...(requiresWith(a.withSchema) ? { required: ['with'] } : {}) },
    })),
  };
}

function requiresWith(schema: Record<string, unknown>): boolean {
  return Array.isArray(schema.required) && schema.required.length > 0;
}
