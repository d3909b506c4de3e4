import type { Action } from './action.js';
import { outputFolderProblems } from './output-folder.js';
import { field, withBlock } from './schema-parts.js';

export const adminUsersCreate: Action<{ email: string; first_name: string; last_name: string }> = {
  name: 'admin_users.create',
  summary: 'create a site admin user (POST …/wpa-create-user)',
  scope: 'environment',
  endpoint: 'createAdminUser',
  // Sending it twice creates no second user: the service answers create_wp_admin_user: false.
  creates: false,
  example: { email: 'ops@example.org', first_name: 'Fleet', last_name: 'Ops' },
  readAnswer(data) {
    const answered = (data ?? {}) as { create_wp_admin_user?: unknown };
    return answered.create_wp_admin_user === false ? { note: 'the service answered create_wp_admin_user: false (the user probably exists already)' } : {};
  },
  withSchema: withBlock(
    { email: field('create-admin-user', 'email'), first_name: field('create-admin-user', 'first_name'), last_name: field('create-admin-user', 'last_name') },
    ['email', 'first_name', 'last_name'],
  ),
  expandEnvironment(env, ctx) {
    const { email, first_name, last_name } = ctx.with;
    return [{ request: { endpoint: 'createAdminUser', params: { env_id: env.id }, body: { email, first_name, last_name } } }];
  },
};

/** Login links are single-sign-on secrets: they go only to `output_file` (mode 0600), never a report or log. */
export const adminUsersLoginLink: Action<{ email: string; output_file: string }> = {
  name: 'admin_users.login_link',
  summary: 'get an admin login link into a private file (POST …/wpa-login-url)',
  scope: 'environment',
  endpoint: 'getLoginUrl',
  creates: false,
  readOnly: true,
  example: { email: 'ops@example.org', output_file: 'login-links.json' },
  withSchema: withBlock(
    {
      email: field('login-url', 'email'),
      output_file: { type: 'string', minLength: 1, description: 'file the links are written to (mode 0600), relative to the working directory' },
    },
    ['email', 'output_file'],
  ),
  // The link is kept only to be written to output_file; the report and logs never see it.
  readAnswer(data) {
    const link = ((data ?? {}) as { login_link?: unknown }).login_link;
    return typeof link === 'string' ? { output: { login_link: link } } : {};
  },
  privateOutput(w, steps) {
    const links = steps.flatMap((s) => {
      const link = (s.private_output as { login_link?: string } | undefined)?.login_link;
      return link ? [{ site: s.target.site, environment: s.target.environment, env_id: s.target.env_id, email: w.email, login_link: link }] : [];
    });
    return links.length > 0 ? { what: 'login links', file: w.output_file, text: `${JSON.stringify(links, null, 2)}\n` } : undefined;
  },
  privateFile: (w) => ({ field: 'output_file', file: w.output_file, kind: 'login-links' }),
  check: (w) => (typeof w.output_file === 'string' ? outputFolderProblems(w.output_file) : []),
  expandEnvironment(env, ctx) {
    return [{ request: { endpoint: 'getLoginUrl', params: { env_id: env.id }, body: { email: ctx.with.email } } }];
  },
};
