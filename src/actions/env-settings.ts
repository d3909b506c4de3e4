import type { EndpointName } from '../api/endpoints.js';
import { SSH_EXPIRATION_INTERVALS } from '../api/types.js';
import type { Action } from './action.js';
import { field, withBlock } from './schema-parts.js';

/** Actions that set one state of an environment from a `with:` block equal to the body. */
function setting(name: string, summary: string, endpoint: EndpointName, bodySchema: string, example: Record<string, unknown>): Action {
  const fields = Object.keys(example);
  return {
    name,
    summary,
    scope: 'environment',
    endpoint,
    creates: false,
    example,
    withSchema: withBlock(Object.fromEntries(fields.map((f) => [f, field(bodySchema, f)])), fields),
    expandEnvironment(env, ctx) {
      return [{ request: { endpoint, params: { env_id: env.id }, body: Object.fromEntries(fields.map((f) => [f, ctx.with[f]])) } }];
    },
  };
}

export const sshSetStatus = setting('ssh.set_status', 'enable or disable SFTP/SSH (POST …/ssh/set-status)', 'setSshStatus', 'ssh-status', { is_enabled: true });
export const sshSetPasswordExpiration: Action = {
  ...setting(
    'ssh.set_password_expiration',
    'set the SFTP/SSH password expiration interval (POST …/ssh/change-expiration-interval)',
    'setSshExpiration',
    'ssh-expiration',
    { exp_interval: 'days_30' },
  ),
  advise(w) {
    const value = w.exp_interval;
    if (typeof value !== 'string' || (SSH_EXPIRATION_INTERVALS as readonly string[]).includes(value)) return [];
    return [
      {
        path: 'exp_interval',
        message: `${JSON.stringify(value)} is none of the intervals the service is known to take (${SSH_EXPIRATION_INTERVALS.join(', ')})`,
      },
    ];
  },
};
export const sftpAccountsSetStatus = setting(
  'sftp_accounts.set_status',
  'enable or disable additional SFTP accounts (PUT …/additional-sftp-accounts/toggle-status)',
  'toggleSftpAccounts',
  'toggle-sftp-accounts',
  { enabled: false },
);
