import { DNS_MIN_TTL } from '../api/types.js';
import { matchesAny } from '../util/glob.js';
import { fillTemplate, templateValues, type Action } from './action.js';
import { field, globs, template, withBlock } from './schema-parts.js';

/**
 * One DNS record on each domain of the selected environments. Domains come from a read of each
 * environment's domain list; by default only domains whose DNS the provider serves are touched.
 */
type DnsRecordWith = {
  domains?: string | string[];
  provider_dns_only?: boolean;
  type: string;
  name: string;
  ttl?: number;
  resource_records: { value: string }[];
};

export const dnsRecordsCreate: Action<DnsRecordWith> = {
  name: 'dns_records.create',
  summary: 'create a DNS record on the domains of each environment (POST /domains/{domain_id}/dns-records)',
  scope: 'domain',
  endpoint: 'createDnsRecord',
  creates: true,
  example: { type: 'A', name: 'www.{{domain}}', ttl: 300, resource_records: [{ value: '203.0.113.10' }] },
  advise(w) {
    // The vendor's document requires a TTL of at least 300 seconds; the spec gives no minimum.
    if (w.ttl === undefined || w.ttl >= DNS_MIN_TTL) return [];
    return [{ path: 'ttl', message: `a TTL of ${w.ttl}s is below the ${DNS_MIN_TTL}s the service's own API document requires` }];
  },
  withSchema: withBlock(
    {
      domains: { ...globs, description: 'only domains whose name matches (globs); default all' },
      provider_dns_only: { type: 'boolean', default: true, description: 'skip domains whose DNS the provider does not serve' },
      type: field('create-dns-record', 'type'),
      name: template('fully qualified record name; {{domain}}, {{env}}, {{site}} are filled in, e.g. "www.{{domain}}"'),
      ttl: field('create-dns-record', 'ttl'),
      resource_records: field('create-dns-record', 'resource_records'),
    },
    ['type', 'name', 'resource_records'],
  ),
  expandDomain(domain, env, ctx) {
    if (!matchesAny(domain.name, ctx.with.domains)) return [];
    if ((ctx.with.provider_dns_only ?? true) && !domain.uses_provider_dns) return [{ skip: `domain ${domain.name} does not use the provider's DNS` }];
    const name = fillTemplate(ctx.with.name, { ...templateValues(ctx, env), domain: domain.name });
    const body: Record<string, unknown> = { type: ctx.with.type, name, resource_records: ctx.with.resource_records };
    if (ctx.with.ttl !== undefined) body.ttl = ctx.with.ttl;
    return [{ request: { endpoint: 'createDnsRecord', params: { domain_id: domain.id }, body } }];
  },
};
