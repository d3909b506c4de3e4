import { fillTemplate, templateValues, type Action } from './action.js';
import { template, withBlock } from './schema-parts.js';

/**
 * A manual backup of each environment. With `unless_exists`, the planner reads each environment's
 * backups first and skips one that already has a manual backup with this very tag: re-running a
 * nightly job that failed halfway backs up only what is missing (one read per environment).
 */
export const backupsCreate: Action<{ tag: string; unless_exists?: boolean }> = {
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
    },
    ['tag'],
  ),
  reads: (w) => (w.unless_exists ? ['backups'] : []),
  expandEnvironment(env, ctx) {
    const tag = fillTemplate(ctx.with.tag, templateValues(ctx, env));
    if (ctx.with.unless_exists) {
      const existing = ctx.inventory.backups?.[env.id]?.find((b) => b.type === 'manual' && (b.note === tag || b.name === tag));
      if (existing) return [{ skip: `a manual backup tagged ${JSON.stringify(tag)} exists already (id ${existing.id})` }];
    }
    return [{ request: { endpoint: 'addManualBackup', params: { env_id: env.id }, body: { tag } } }];
  },
};
