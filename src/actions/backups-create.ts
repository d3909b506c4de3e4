import type { Backup } from '../api/types.js';
import { backupCreatedMs } from '../api/backup-time.js';
import { fillTemplate, templateValues, type Action, type RequestSpec } from './action.js';
import { template, withBlock } from './schema-parts.js';

/**
 * A manual backup of each environment. With `unless_exists`, the planner reads each environment's
 * backups first and skips one that already has a manual backup with this very tag: re-running a
 * nightly job that failed halfway backs up only what is missing (one read per environment).
 */
export const backupsCreate: Action<{ tag: string; unless_exists?: boolean; keep?: number }> = {
  name: 'backups.create',
  summary: 'take a manual backup (POST …/manual-backups)',
  scope: 'environment',
  endpoint: 'addManualBackup',
  creates: true,
  example: { tag: 'nightly-{{date}}', unless_exists: true },
  withSchema: withBlock(
    {
      tag: template('the backup tag; {{date}}, {{env}}, {{site}} and {{env_id}} are filled in'),
      unless_exists: { type: 'boolean', default: false, description: 'skip an environment that already has a manual backup with this tag (one read each)' },
      keep: {
        type: 'integer',
        minimum: 1,
        maximum: 50,
        description:
          "the newest N backups of this task (its tag on any date) that stay on each environment: older ones are removed after a new one succeeded. Without it none is removed, unless the environment's manual backup slots are full",
      },
    },
    ['tag'],
  ),
  reads: (w) => (w.unless_exists ? ['backups'] : []),
  record: (step) => ({ heading: 'Backups', text: `backup taken, tag ${tagOf(step.body)}`, kind: 'backup' }),
  expandEnvironment(env, ctx) {
    const tag = fillTemplate(ctx.with.tag, templateValues(ctx, env));
    if (ctx.with.unless_exists) {
      const existing = ctx.inventory.backups?.[env.id]?.find((b) => b.type === 'manual' && (b.note === tag || b.name === tag));
      if (existing) return [{ skip: `a manual backup tagged ${JSON.stringify(tag)} exists already (id ${existing.id})` }];
    }
    return [{ request: { endpoint: 'addManualBackup', params: { env_id: env.id }, body: { tag } } }];
  },
};

/**
 * `backup_first: true` on another task: the manual backup each environment gets before that task's
 * write, and how to find it in the environment's backup list afterwards (its id is what a restore
 * asks for). The tag names the task and the day: `sitefleet-before-theme-updates-2026-11-22`.
 */
export const restorePoint = {
  action: backupsCreate,
  tag(task: string, date: string): string {
    const slug =
      task
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-+|-+$/g, '')
        .slice(0, 60) || 'task';
    return `sitefleet-before-${slug}-${date}`;
  },
  request(envId: string, tag: string): RequestSpec {
    return { endpoint: 'addManualBackup', params: { env_id: envId }, body: { tag } };
  },
  /** The tag a restore-point request carries. */
  tagOf,
  /** The newest manual backup with this tag (the service keeps a manual backup's tag as its note). */
  find(backups: readonly Backup[], tag: string): Backup | undefined {
    return backups
      .filter((b) => b.note === tag || b.name === tag)
      .sort((a, b) => (backupCreatedMs(b.created_at) ?? 0) - (backupCreatedMs(a.created_at) ?? 0))[0];
  },
};

/** The tag a backup request carries. */
function tagOf(body: unknown): string {
  const tag = (body as { tag?: unknown } | undefined)?.tag;
  return typeof tag === 'string' ? tag : '';
}
