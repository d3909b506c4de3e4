import type { Action } from './action.js';
import { field, withBlock } from './schema-parts.js';

export const phpSetVersion: Action<{ php_version: string; opt_out_automatic_updates?: boolean }> = {
  name: 'php.set_version',
  summary: 'set the PHP version (PUT /sites/tools/modify-php-version)',
  scope: 'environment',
  endpoint: 'modifyPhpVersion',
  creates: false,
  example: { php_version: '8.3' },
  withSchema: withBlock(
    {
      php_version: field('modify-php-version', 'php_version'),
      opt_out_automatic_updates: { type: 'boolean', description: 'opt the environment out of automatic PHP updates' },
    },
    ['php_version'],
  ),
  record: (step) => ({ heading: 'PHP versions', text: `PHP ${String((step.body as { php_version?: unknown } | undefined)?.php_version)} set` }),
  expandEnvironment(env, ctx) {
    const body: Record<string, unknown> = { environment_id: env.id, php_version: ctx.with.php_version };
    if (ctx.with.opt_out_automatic_updates !== undefined) body.is_opt_out_from_automatic_php_update = ctx.with.opt_out_automatic_updates;
    return [{ request: { endpoint: 'modifyPhpVersion', params: {}, body } }];
  },
};
