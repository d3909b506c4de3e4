import { describe, expect, it } from 'vitest';
import { runCli, simEnv, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import type { Simulator } from '../../src/sim/server.js';

const start = useSimulator();

/** Values of variables the nightly job has, and that a renamed site must never read. */
const JOB_SECRETS = { AWS_SECRET_ACCESS_KEY: 'aws-secret-value-1234', LEAK: 'leaked-label', leak: 'leaked-lower' };

/** Every request body the simulator received, as text. */
function sent(sim: Simulator): string {
  return JSON.stringify(sim.log.filter((e) => e.method !== 'GET').map((e) => e.body));
}

/** Renames the first site (and its live environment) as someone on the account may; returns the environment's id. */
function renameFirstSite(sim: Simulator, site: string, env?: string): string {
  const first = [...sim.fleet.sites.values()][0]!;
  const live = first.envIds.map((id) => sim.fleet.environments.get(id)!).find((e) => e.displayName === 'live')!;
  if (env) sim.rename('environment', `${first.displayName}/live`, env);
  sim.rename('site', first.displayName, site);
  return live.id;
}

describe('a name the service gives is data: it never reads a secret (issue 28, finding 1)', () => {
  it('backups.create: a site named ${SITEFLEET_TOKEN} gets a tag with those very characters, never the token', async () => {
    const { sim } = await start({ sites: 3, operationDelayMs: 0 });
    const envId = renameFirstSite(sim, '${SITEFLEET_TOKEN}', '${AWS_SECRET_ACCESS_KEY}');
    const file = writePlaybook(
      'version: 1\nname: nightly\ntasks:\n  - { name: backup, action: backups.create, target: all, with: { tag: "nightly-{{date}}-{{site}}-{{env}}" } }\n',
    );
    const result = await runCli(['run', file, '--yes'], { ...simEnv(sim), ...JOB_SECRETS });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const body = sim.log.find((e) => e.method === 'POST' && e.path.includes(envId))!.body as { tag: string };
    expect(body.tag).toMatch(/^nightly-\d{4}-\d\d-\d\d-\$\{SITEFLEET_TOKEN\}-\$\{AWS_SECRET_ACCESS_KEY\}$/);
    expect(sent(sim)).not.toContain(sim.token);
    expect(sent(sim)).not.toContain(JOB_SECRETS.AWS_SECRET_ACCESS_KEY);
  });

  it('domains.add: a site named ${leak} is not a domain name, so the plan refuses it and nothing is sent', async () => {
    const { sim } = await start({ sites: 3, operationDelayMs: 0 });
    // Lower case: a domain name is lowered before it is checked and sent.
    renameFirstSite(sim, '${leak}');
    const file = writePlaybook(
      'version: 1\nname: t\ntasks:\n  - { name: t, action: domains.add, target: all, with: { domain_name: "{{site}}.example.org" } }\n',
    );
    const result = await runCli(['run', file, '--yes'], { ...simEnv(sim), ...JOB_SECRETS });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('${leak}');
    expect(result.stderr + result.stdout).not.toContain(JOB_SECRETS.leak);
    expect(sim.log.filter((e) => e.method !== 'GET')).toEqual([]);
  });

  it('dns_records.create: a record named after a site named ${leak} carries those characters, never the value', async () => {
    const { sim } = await start({ sites: 3, operationDelayMs: 0 });
    renameFirstSite(sim, '${leak}');
    const file = writePlaybook(
      'version: 1\nname: t\ntasks:\n  - { name: t, action: dns_records.create, target: all, with: { type: A, name: "{{site}}.{{domain}}", resource_records: [{ value: "203.0.113.10" }] } }\n',
    );
    await runCli(['run', file, '--yes'], { ...simEnv(sim), ...JOB_SECRETS });
    const names = sim.log.filter((e) => e.method === 'POST').map((e) => (e.body as { name: string }).name);
    expect(names.some((n) => n.startsWith('${leak}.'))).toBe(true);
    expect(sent(sim)).not.toContain(JOB_SECRETS.leak);
  });

  it('a secret field the playbook wrote as ${VAR} is still filled in when sent', async () => {
    const { sim } = await start({ sites: 2, operationDelayMs: 0 });
    const site = [...sim.fleet.sites.values()][0]!;
    const file = writePlaybook(
      `version: 1\nname: t\ntasks:\n  - { name: env, action: environments.create, with: { site_id: "${site.id}", display_name: "\${LEAK}", admin_password: "\${ADMIN_PW}" } }\n`,
    );
    const result = await runCli(['run', file, '--yes', '--wait'], { ...simEnv(sim), ...JOB_SECRETS, ADMIN_PW: 'correct horse battery staple' });
    expect(result.code).toBe(0);
    const created = [...sim.fleet.environments.values()].find((e) => e.siteId === site.id && e.displayName === JOB_SECRETS.LEAK);
    // The playbook's own text may reference variables outside secret fields: they are resolved when it is loaded.
    expect(created?.adminPassword).toBe('correct horse battery staple');
    expect(JSON.stringify(sim.log.map((e) => e.body))).not.toContain('correct horse');
  });
});
