import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Plan } from '../../src/plan/plan.js';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { sealOf } from '../../src/util/seal.js';

const start = useSimulator();

/** A server on 127.0.0.1 standing in for the machine's own network: it counts what reaches it. */
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});
async function standIn(): Promise<{ url: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.end('ok');
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/{{domain}}/`, hits };
}

/** Plans `text` into dir/plan.json, lets `tamper` rewrite the saved plan, and runs it. */
async function runTampered(sim: Simulator, text: string, tamper: (plan: Plan) => void) {
  const dir = tempDir();
  const playbook = writePlaybook(text, dir);
  const planFile = join(dir, 'plan.json');
  expect((await runCli(['plan', playbook, '--out', planFile], simEnv(sim))).code).toBe(0);
  const plan = JSON.parse(readFileSync(planFile, 'utf8')) as Plan;
  const before = JSON.stringify(plan);
  tamper(plan);
  expect(JSON.stringify(plan)).not.toBe(before);
  writeFileSync(planFile, JSON.stringify(plan, null, 2));
  const reportPath = join(dir, 'report.json');
  // The playbook is given: the plan's seal (broken by the edit) does not matter then, and what is held is the fresh plan.
  const result = await runCli(['run', playbook, '--plan', planFile, '--yes', '--poll-interval', '50', '--report', reportPath], simEnv(sim));
  return { plan, result, report: existsSync(reportPath) ? (JSON.parse(readFileSync(reportPath, 'utf8')) as Report) : undefined };
}

const writesTo = (sim: Simulator, envId: string) => sim.log.filter((e) => e.method !== 'GET' && e.path.includes(envId));

describe('a saved plan is data: it narrows what the playbook sends, never widens it (issue 28, findings 3 and 4)', () => {
  it.each([
    ['parameters only', false],
    ['parameters and path', true],
  ])('a step with its %s pointed at the live environment is not sent there', async (_what, withPath) => {
    const { sim } = await start({ sites: 4, seed: 3, operationDelayMs: 0 });
    const text =
      'version: 1\nname: cli\ntasks:\n  - { name: cli, action: wp_cli.run, target: { environment: staging }, with: { wp_command: "wp cache flush" } }\n';
    let live = '';
    let staging = '';
    const { result, report } = await runTampered(sim, text, (plan) => {
      const step = plan.steps[0]!;
      staging = step.params.env_id!;
      const site = sim.fleet.sites.get(sim.fleet.environments.get(staging)!.siteId)!;
      live = site.envIds.find((id) => sim.fleet.environments.get(id)!.displayName === 'live')!;
      step.params = { ...step.params, env_id: live }; // the old check compared method, path and body only
      if (withPath) step.path = step.path.replace(staging, live);
    });
    expect(writesTo(sim, live)).toEqual([]);
    if (!withPath) {
      // A path the endpoint table would not build from the parameters: not a plan sitefleet wrote.
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/plan\.json:\d+:\d+: steps\.0\.path: is not the path runWpCliCommand builds from the step's params/);
      expect(sim.log.filter((e) => e.method !== 'GET')).toEqual([]);
      return;
    }
    expect(result.stdout).toContain('changed since the plan');
    const dropped = report!.results.find((r) => r.target.env_id === staging);
    expect(dropped).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/^changed since the plan: the request is now POST /) });
  });

  it('a restore point pointed elsewhere, or with another tag, is taken as the playbook says', async () => {
    const { sim } = await start({ sites: 4, seed: 3, operationDelayMs: 0 });
    const text =
      'version: 1\nname: cli\ntasks:\n  - { name: cli, action: wp_cli.run, target: { environment: staging }, with: { wp_command: "wp cache flush" }, backup_first: true }\n';
    const other = [...sim.fleet.environments.values()].find((e) => e.displayName === 'live')!.id;
    const { plan, result } = await runTampered(sim, text, (p) => {
      for (const s of p.steps.filter((s) => s.role === 'backup')) {
        s.params = { env_id: other };
        s.path = `/sites/environments/${other}/manual-backups`;
        s.body = { tag: 'attacker-chosen' };
      }
    });
    expect(result.code).toBe(0);
    expect(writesTo(sim, other)).toEqual([]);
    const backups = sim.log.filter((e) => e.method === 'POST' && e.path.endsWith('/manual-backups'));
    expect(backups).toHaveLength(plan.steps.filter((s) => s.role === 'backup').length);
    expect(backups.every((b) => (b.body as { tag: string }).tag.startsWith('sitefleet-before-cli-'))).toBe(true);
  });

  it("a health check pointed at the machine's network, and a rollout without its canary, come from the playbook instead", async () => {
    const { sim } = await start({ sites: 6, seed: 3, operationDelayMs: 20 });
    const inside = await standIn();
    const text = `version: 1\nname: php\ntasks:\n  - name: php\n    action: php.set_version\n    target: { environment: live }\n    with: { php_version: "8.2" }\n    health: { url: "${sim.siteUrl}" }\n    rollout: { canary: 1, waves: ["100%"] }\n`;
    const { result } = await runTampered(sim, text, (plan) => {
      const task = plan.tasks[0]!;
      task.health = { ...task.health!, url: inside.url };
      delete task.rollout;
      for (const s of plan.steps) {
        s.health = { url: inside.url.replace('{{domain}}', 'x') };
        delete s.wave;
      }
    });
    expect(result.code).toBe(0);
    expect(inside.hits).toEqual([]);
    expect(sim.siteLog.length).toBeGreaterThan(0);
    // The canary's operation was seen ended before the second write went out.
    const writes = sim.log.filter((e) => e.method !== 'GET');
    const canaryPoll = sim.log.find((e) => e.method === 'GET' && e.operation_id === writes[0]!.operation_id);
    expect(canaryPoll, 'the canary is polled').toBeDefined();
    expect(canaryPoll!.seq).toBeLessThan(writes[1]!.seq);
  });

  it('a plan that names a playbook outside its folder is refused by name, its text never read or quoted', async () => {
    const { sim } = await start({ sites: 2 });
    const dir = tempDir();
    const playbook = writePlaybook(
      'version: 1\nname: php\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.2" } }\n',
      dir,
    );
    const planFile = join(dir, 'plan.json');
    expect((await runCli(['plan', playbook, '--out', planFile], simEnv(sim))).code).toBe(0);
    const plan = JSON.parse(readFileSync(planFile, 'utf8')) as Plan;
    const secret = writePlaybook('password: hunter2-the-secret-value\n', tempDir(), 'secrets.yaml');
    for (const [named, sha] of [
      ['/etc/passwd', plan.made!.playbook_sha256],
      [secret, createHash('sha256').update(readFileSync(secret)).digest('hex')],
      ['../' + secret.split('/').slice(-2).join('/'), plan.made!.playbook_sha256],
    ]) {
      const edited = { ...plan, playbook: named, made: { ...plan.made!, playbook_sha256: sha } };
      // Sealed again with the token: the folder rule holds even for a plan its seal vouches for.
      writeFileSync(planFile, JSON.stringify({ ...edited, seal: sealOf(sim.token, 'plan', edited) }));
      const result = await runCli(['run', '--plan', planFile, '--yes'], simEnv(sim));
      expect(result.code, named).toBe(2);
      expect(result.stderr.trim().split('\n'), named).toHaveLength(1);
      expect(result.stderr).toContain('outside its folder');
      expect(result.stderr).not.toMatch(/root:|hunter2/);
    }
    // The one inside the folder, with another text than the plan's: refused by its hash before it is parsed.
    writeFileSync(join(dir, 'other.yaml'), 'root:x:0:0:not yaml of a playbook: [\n');
    const other = { ...plan, playbook: join(dir, 'other.yaml') };
    writeFileSync(planFile, JSON.stringify({ ...other, seal: sealOf(sim.token, 'plan', other) }));
    const otherText = await runCli(['run', '--plan', planFile, '--yes'], simEnv(sim));
    expect(otherText.code).toBe(2);
    expect(otherText.stderr).toContain('was made from another text of');
    expect(otherText.stderr).not.toContain('root:');
    // Without this token's seal, the playbook a plan names is not taken on its word at all.
    writeFileSync(planFile, JSON.stringify(other));
    const unsealed = await runCli(['run', '--plan', planFile, '--yes'], simEnv(sim));
    expect(unsealed.code).toBe(2);
    expect(unsealed.stderr).toContain("does not carry this API token's seal");
    expect(sim.log.filter((e) => e.method !== 'GET')).toEqual([]);
  });
});
