import { fillTemplate, templateValues, type Action } from './action.js';
import { conditionsOf, field, secretRef, template, withBlock } from './schema-parts.js';

export const domainsAdd: Action<{ domain_name: string } & Record<string, unknown>> = {
  name: 'domains.add',
  summary: 'add a domain to each environment (POST …/domains)',
  scope: 'environment',
  endpoint: 'addDomain',
  creates: true,
  example: { domain_name: '{{site}}.example.org' },
  secretFields: ['custom_ssl_key'],
  withSchema: {
    ...conditionsOf('add-domain'),
    ...withBlock(
      {
        domain_name: template('the domain; {{env}}, {{site}} and {{env_id}} are filled in, e.g. "{{site}}.example.org"'),
        is_wildcardless: field('add-domain', 'is_wildcardless'),
        add_with_www_subdomain: field('add-domain', 'add_with_www_subdomain'),
        setup_type: field('add-domain', 'setup_type'),
        custom_ssl_key: secretRef('private key of a custom certificate'),
        custom_ssl_cert: field('add-domain', 'custom_ssl_cert'),
      },
      ['domain_name'],
    ),
  },
  expandEnvironment(env, ctx) {
    const body = { ...ctx.with, domain_name: fillTemplate(ctx.with.domain_name, templateValues(ctx, env)).toLowerCase() };
    return [{ request: { endpoint: 'addDomain', params: { env_id: env.id }, body } }];
  },
};
