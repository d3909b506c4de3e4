import { ACTIONS } from '../actions/index.js';
import type { Action, Expansion, WithBlock } from '../actions/action.js';
import { ENDPOINTS, type Endpoint } from '../api/endpoints.js';
import type { InputProblem } from '../errors.js';
import type { Environment, InstalledItem, Inventory } from '../inventory/inventory.js';
import { KIND_TABLE, KINDS, type Kind } from '../inventory/kinds.js';
import type { Task } from '../playbook/types.js';
import { checkBody } from './plan.js';

/** A stand-in environment with one update of each kind of item and one provider-DNS domain: every action expands on it. */
const ENV: Environment = {
  id: '00000000-0000-4000-8000-000000000000',
  site: 'example-site',
  name: 'live',
  items: Object.fromEntries(KINDS.map((kind) => [kind, [standInItem(kind)]])),
};

function standInItem(kind: Kind): InstalledItem {
  return {
    kind,
    name: KIND_TABLE[kind].sample,
    status: 'active',
    version: '1.0.0',
    version_vulnerable: false,
    update_available: true,
    update_version: '1.1.0',
    update_vulnerable: false,
    update_status: '',
    auto_update_type: '',
  };
}
const DOMAIN = { id: '00000000-0000-4000-8000-000000000001', name: 'example-site.example.org', uses_provider_dns: true };
const COMPANY = '00000000-0000-4000-8000-000000000002';
const SITE = '00000000-0000-4000-8000-000000000003';
const OTHER_ENV = '00000000-0000-4000-8000-000000000004';

/** What `action` sends for a `with:` block on the stand-in environment (or site, or domain). */
export function standInExpansions(action: Action, withBlock: WithBlock, targeted: boolean, date: string, company = COMPANY): Expansion[] {
  const inventory: Inventory = {
    company,
    environments: [ENV],
    listed: Object.fromEntries(KINDS.map((kind) => [kind, { count: 1 }])),
    domains: { [ENV.id]: [DOMAIN] },
  };
  const ctx = { with: withBlock, company, date, inventory };
  switch (action.scope) {
    case 'site':
      return targeted
        ? action.expandSite({ id: SITE, name: ENV.site, environments: [ENV, { ...ENV, id: OTHER_ENV, name: 'staging' }] }, ctx)
        : action.expandOnce(ctx);
    case 'once':
      return action.expandOnce(ctx);
    case 'domain':
      return action.expandDomain(DOMAIN, ENV, ctx);
    case 'environment':
      return action.expandEnvironment(ENV, ctx);
  }
}

/**
 * What `run` would refuse that can be known without the service: each task is expanded against a
 * stand-in environment (whatever its target selects) and every body is checked against the API's
 * schema, so a DNS record value that is not an address or a 2,000-character backup tag fails
 * `validate`, as it would fail `run` before any write. Secret fields hold `${VAR}` references whose
 * values CI may not have: they are not judged here.
 */
export function offlineBodyProblems(tasks: Task[], company: string | undefined, date: string): InputProblem[] {
  const problems: InputProblem[] = [];
  for (const task of tasks) {
    const action = ACTIONS.get(task.action)!;
    let expansions: Expansion[];
    try {
      expansions = standInExpansions(action, task.with, task.target !== undefined, date, company ?? COMPANY);
    } catch {
      continue; // a shape the schema let through but the action cannot expand: the schema problem is reported already
    }
    const secrets = new Set((action.secretFields ?? []).map((f) => `tasks.${task.index}.with.${f}`));
    for (const e of expansions) {
      if ('skip' in e) continue;
      const endpoint: Endpoint = ENDPOINTS[e.request.endpoint];
      if (!endpoint.body) continue;
      const found = checkBody(task, endpoint.body, e.request.body, { env_id: ENV.id }, {});
      // With templates, say what they were filled with: the stand-in's names are not the user's.
      const filled = JSON.stringify(task.with).includes('{{') ? ` (templates filled in as for site "${ENV.site}", environment "${ENV.name}")` : '';
      problems.push(
        ...found.filter((p) => !secrets.has(p.path) && !/\$\{/.test(p.message)).map((p) => ({ ...p, message: p.message.replace(/ \(for [^)]*\)$/, filled) })),
      );
    }
  }
  return problems;
}
