import type { EndpointName } from '../api/endpoints.js';
import type { Action } from './action.js';
import { conditionsOf, field, secretRef, uuid, withBlock } from './schema-parts.js';

/**
 * Site-scoped and company-scoped writes: one call each, with ids from `with` (the theme listing
 * carries no site ids). Every one of them creates something, so none is ever sent twice.
 */
function once(
  name: string,
  summary: string,
  endpoint: EndpointName,
  bodySchema: string,
  fields: string[],
  required: string[],
  extra: Record<string, unknown> = {},
): Action {
  const props: Record<string, unknown> = { ...Object.fromEntries(fields.map((f) => [f, field(bodySchema, f)])), ...extra };
  return {
    name,
    summary,
    scope: 'once',
    endpoint,
    creates: true,
    withSchema: { ...withBlock(props, required), ...conditionsOf(bodySchema) },
    expandOnce(ctx) {
      const { site_id, ...body } = ctx.with;
      const params: Record<string, string> = typeof site_id === 'string' ? { site_id } : {};
      return [{ request: { endpoint, params, body: endpoint === 'createPlainSite' ? { company: ctx.company, ...body } : body } }];
    },
  };
}

const siteId = { site_id: { ...uuid, description: 'the site (UUID)' } };

export const environmentsCreate: Action = {
  ...once(
    'environments.create',
    'create an environment with site software (POST /sites/{site_id}/environments)',
    'createEnvironment',
    'create-environment',
    [
      'display_name',
      'site_title',
      'is_premium',
      'admin_email',
      'admin_user',
      'wp_language',
      'is_subdomain_multisite',
      'is_multisite',
      'commerce_plugin',
      'downloads_plugin',
      'seo_plugin',
    ],
    ['site_id', 'display_name'],
    { ...siteId, admin_password: secretRef('the admin password') },
  ),
  secretFields: ['admin_password'],
};
export const environmentsCreatePlain = once(
  'environments.create_plain',
  'create a plain environment without site software (POST /sites/{site_id}/environments/plain)',
  'createPlainEnvironment',
  'create-plain-environment',
  ['display_name', 'is_premium'],
  ['site_id', 'display_name'],
  siteId,
);
export const environmentsClone = once(
  'environments.clone',
  'clone an environment (POST /sites/{site_id}/environments/clone)',
  'cloneEnvironment',
  'clone-environment',
  ['display_name', 'is_premium', 'source_env_id'],
  ['site_id', 'display_name', 'source_env_id'],
  siteId,
);
export const environmentsPush = {
  ...once(
    'environments.push',
    'push one environment onto another (PUT /sites/{site_id}/environments)',
    'pushEnvironment',
    'push-environment',
    ['source_env_id', 'target_env_id', 'push_db', 'push_files', 'run_search_and_replace', 'push_files_option', 'file_list'],
    ['site_id', 'source_env_id', 'target_env_id'],
    siteId,
  ),
  // A push sets the target to the source's content: sending it again gives the same result.
  creates: false,
} satisfies Action;
export const sitesCreatePlain = once(
  'sites.create_plain',
  'create a plain site (POST /sites/plain)',
  'createPlainSite',
  'create-plain-site',
  ['display_name', 'region'],
  ['display_name', 'region'],
);
