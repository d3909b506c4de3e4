import type { Action } from './action.js';
import { field, withBlock } from './schema-parts.js';

export const wpCliRun: Action<{ wp_command: string }> = {
  name: 'wp_cli.run',
  summary: 'run a WP-CLI command (POST …/run-wp-cli-command)',
  scope: 'environment',
  endpoint: 'runWpCliCommand',
  creates: true,
  example: { wp_command: 'wp cache flush' },
  withSchema: withBlock({ wp_command: field('run-wp-cli', 'wp_command') }, ['wp_command']),
  expandEnvironment(env, ctx) {
    return [{ request: { endpoint: 'runWpCliCommand', params: { env_id: env.id }, body: { wp_command: ctx.with.wp_command } } }];
  },
};
