import type { EndpointName } from '../api/endpoints.js';
import type { OnceAction, OperationReading, RequestSpec, SiteAction } from './action.js';
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
  example: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): OnceAction {
  const props: Record<string, unknown> = { ...Object.fromEntries(fields.map((f) => [f, field(bodySchema, f)])), ...extra };
  return {
    name,
    summary,
    scope: 'once',
    endpoint,
    creates: true,
    example,
    withSchema: { ...withBlock(props, required), ...conditionsOf(bodySchema) },
    ...(CREATED_ID[endpoint] && { readOperation: createdReader(...CREATED_ID[endpoint]) }),
    expandOnce(ctx) {
      const { site_id, ...body } = ctx.with;
      const params: Record<string, string> = typeof site_id === 'string' ? { site_id } : {};
      return [{ request: requestOf(endpoint, params, endpoint === 'createPlainSite' ? { company: ctx.company, ...body } : body) }];
    },
  };
}

/** A push changes its target environment; a clone occupies its source while it copies it. */
function requestOf(endpoint: EndpointName, params: Record<string, string>, body: Record<string, unknown>): RequestSpec {
  const id = (field: string) => (typeof body[field] === 'string' ? body[field] : undefined);
  const changes = endpoint === 'pushEnvironment' ? id('target_env_id') : undefined;
  const occupies = endpoint === 'cloneEnvironment' ? id('source_env_id') : undefined;
  return { endpoint, params, body, ...(changes ? { changes } : {}), ...(occupies ? { occupies } : {}) };
}

/**
 * What a finished creation's `data` names the new thing by: `{"idEnv": …}` or `{"idSite": …}`, as
 * the real service answers (shared/real-service-notes.md: the Terraform provider's names "match
 * Kinsta API responses"). A push creates nothing.
 */
const CREATED_ID: Partial<Record<EndpointName, readonly [field: string, as: 'env_id' | 'site_id']>> = {
  createEnvironment: ['idEnv', 'env_id'],
  createPlainEnvironment: ['idEnv', 'env_id'],
  cloneEnvironment: ['idEnv', 'env_id'],
  createPlainSite: ['idSite', 'site_id'],
};

/** An id is service text: a non-empty string of a sane length, shown only through safe-text. */
const MAX_ID_LENGTH = 200;

function createdReader(field: string, as: 'env_id' | 'site_id'): (data: unknown) => OperationReading {
  return (data) => {
    const id = typeof data === 'object' && data !== null ? (data as Record<string, unknown>)[field] : undefined;
    if (typeof id !== 'string' || id === '' || id.length > MAX_ID_LENGTH) return {};
    return { created: as === 'env_id' ? { env_id: id } : { site_id: id } };
  };
}

/** Environment names a per-site task may give instead of ids: `source_environment: live` → that site's live environment. */
const BY_NAME: Record<string, string> = { source_environment: 'source_env_id', target_environment: 'target_env_id' };
export const ENVIRONMENT_NAME_FIELDS = Object.keys(BY_NAME);

/**
 * A site-scoped action: once on `with.site_id`, or, with a `target`, once per site of the selected
 * environments ("a plain environment on every acme-* site", "clone live to staging on these sites").
 * A site whose listing shows an environment of the name to be created is skipped, naming its id: the
 * playbook run again the next night does not make a second one, and says which it found.
 */
function perSite(action: OnceAction, nameFields: string[] = []): SiteAction {
  const names = Object.fromEntries(
    nameFields.map((f) => [
      f,
      {
        type: 'string',
        minLength: 1,
        description: `the name of an environment of each targeted site, e.g. live (instead of ${BY_NAME[f]}; with a target only)`,
      },
    ]),
  );
  const schema = action.withSchema as { properties: Record<string, unknown>; required: string[] };
  const required = schema.required.filter((r) => r !== 'site_id' && !nameFields.some((f) => BY_NAME[f] === r));
  const either = nameFields.map((f) => ({ anyOf: [{ required: [BY_NAME[f]] }, { required: [f] }] }));
  return {
    ...action,
    scope: 'site',
    withSchema: { ...schema, properties: { ...schema.properties, ...names }, required, ...(either.length ? { allOf: either } : {}) },
    expandSite(site, ctx) {
      const { site_id: _ignored, ...rest } = ctx.with;
      const body: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(rest)) {
        if (!(key in BY_NAME)) {
          body[key] = value;
          continue;
        }
        const env = site.environments.find((e) => e.name === value);
        if (!env) return [{ skip: `site ${site.name} has no environment named ${JSON.stringify(value)}` }];
        body[BY_NAME[key]!] = env.id;
      }
      const existing = CREATED_ID[action.endpoint]?.[1] === 'env_id' ? site.environments.find((e) => e.name === body.display_name) : undefined;
      if (existing) return [{ skip: `site ${site.name} has an environment named ${JSON.stringify(existing.name)} already (env_id ${existing.id})` }];
      return [{ request: requestOf(action.endpoint, { site_id: site.id }, body) }];
    },
  };
}

// Ids in the examples: documentation values, never sent.
const SITE = '00000000-0000-4000-8000-00000000000a';
const ENV = '00000000-0000-4000-8000-00000000000b';
const OTHER_ENV = '00000000-0000-4000-8000-00000000000c';

const siteId = { site_id: { ...uuid, description: 'the site (UUID)' } };

export const environmentsCreate = perSite({
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
    { site_id: SITE, display_name: 'staging-2', admin_email: 'ops@example.org', admin_password: '${ADMIN_PASSWORD}' },
    { ...siteId, admin_password: secretRef('the admin password') },
  ),
  secretFields: ['admin_password'],
});
export const environmentsCreatePlain = perSite(
  once(
    'environments.create_plain',
    'create a plain environment without site software (POST /sites/{site_id}/environments/plain)',
    'createPlainEnvironment',
    'create-plain-environment',
    ['display_name', 'is_premium'],
    ['site_id', 'display_name'],
    { site_id: SITE, display_name: 'plain' },
    siteId,
  ),
);
export const environmentsClone = perSite(
  once(
    'environments.clone',
    'clone an environment (POST /sites/{site_id}/environments/clone)',
    'cloneEnvironment',
    'clone-environment',
    ['display_name', 'is_premium', 'source_env_id'],
    ['site_id', 'display_name', 'source_env_id'],
    { site_id: SITE, display_name: 'staging-copy', source_env_id: ENV },
    siteId,
  ),
  ['source_environment'],
);
export const environmentsPush = perSite(
  {
    ...once(
      'environments.push',
      'push one environment onto another (PUT /sites/{site_id}/environments)',
      'pushEnvironment',
      'push-environment',
      ['source_env_id', 'target_env_id', 'push_db', 'push_files', 'run_search_and_replace', 'push_files_option', 'file_list'],
      ['site_id', 'source_env_id', 'target_env_id'],
      { site_id: SITE, source_env_id: ENV, target_env_id: OTHER_ENV, push_db: true, push_files: true },
      siteId,
    ),
    // A push sets the target to the source's content: sending it again gives the same result.
    creates: false,
  },
  ['source_environment', 'target_environment'],
);
export const sitesCreatePlain = once(
  'sites.create_plain',
  'create a plain site (POST /sites/plain)',
  'createPlainSite',
  'create-plain-site',
  ['display_name', 'region'],
  ['display_name', 'region'],
  { display_name: 'new-site', region: 'us-central1' },
);
