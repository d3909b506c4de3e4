import type { RequestSpec, Target } from './action.js';

/**
 * `settings.restore`: what a restore sends beyond the backup's id. The spec names the endpoint
 * without showing it; the vendor's OpenAPI 1.87.0 asks for `notified_user_id` too, a later capture
 * of its documentation for `env_display_name_of_backup`. Both are the playbook's to add.
 */
export interface RestoreSettings {
  /** A user of the company the service tells of the restore (the 1.87.0 document requires one). */
  notified_user_id?: string;
  /** Send the environment's display name as `env_display_name_of_backup` (the later capture). */
  env_display_name_of_backup?: boolean;
}

/**
 * Putting an environment back from the restore point this run took for it (`health.on_broken:
 * restore`, and `sitefleet restore REPORT`). The request lives here, beside the restore point it
 * undoes to (backups-create.ts), and goes to the endpoint table's `restoreBackup`.
 */
export const restoreFrom = {
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    description: 'what a restore (health.on_broken: restore, sitefleet restore) sends beside the backup id',
    properties: {
      notified_user_id: {
        type: 'string',
        format: 'uuid',
        description: 'a user of the company the service tells of the restore (the vendor document 1.87.0 requires it)',
      },
      env_display_name_of_backup: {
        type: 'boolean',
        description: "send the environment's display name as env_display_name_of_backup (a later capture of the vendor's documentation)",
      },
    },
  },
  /** The restore request for one environment; the backup id is a number the run read from the service itself. */
  request(target: Target, backupId: number, settings: RestoreSettings = {}): RequestSpec {
    const body: Record<string, unknown> = { backup_id: backupId };
    if (settings.notified_user_id) body.notified_user_id = settings.notified_user_id;
    if (settings.env_display_name_of_backup && target.environment) body.env_display_name_of_backup = target.environment;
    return { endpoint: 'restoreBackup', params: { target_env_id: target.env_id! }, body };
  },
  /** What a person reads before choosing it: a restore is not an undo of one change. */
  warning: 'a restore puts back the whole site as it was at its backup: orders, comments and form entries since then are lost',
};
