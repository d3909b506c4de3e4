import { fillTemplate, templateValues, type Action } from './action.js';
import { template, withBlock } from './schema-parts.js';

export const backupsCreate: Action<{ tag: string }> = {
  name: 'backups.create',
  summary: 'take a manual backup (POST …/manual-backups)',
  scope: 'environment',
  endpoint: 'addManualBackup',
  creates: true,
  withSchema: withBlock({ tag: template('the backup tag; {{date}}, {{env}}, {{site}} and {{env_id}} are filled in') }, ['tag']),
  expandEnvironment(env, ctx) {
    return [{ request: { endpoint: 'addManualBackup', params: { env_id: env.id }, body: { tag: fillTemplate(ctx.with.tag, templateValues(ctx, env)) } } }];
  },
};
