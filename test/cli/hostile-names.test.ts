import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostAlias, sshConfig } from '../../src/cli/commands/ssh-config-read.js';
import { humanLine } from '../../src/app/logger.js';
import { paint } from '../../src/cli/render.js';
import { parse as parseCsv } from '../../src/inventory/csv.js';
import { HOSTILE_NAMES, HOSTILE_SSH } from '../../src/sim/hostile-names.js';
import type { SshConfig } from '../../src/api/types.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook, type CliResult } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { expectSafeTerminal, expectStrictXml } from '../helpers/sinks.js';

/**
 * The hostile corpus (`sim --names hostile`) through every command and output format: what a person
 * reads is safe for a terminal, what a spreadsheet, ssh or a CI system reads is safe for it, and what
 * a machine reads (JSON) holds every name exactly.
 */
const start = useSimulator();
/** Enough sites that each corpus name is a site, and another one a staging environment. */
const SITES = HOSTILE_NAMES.length + 2;

function hostile() {
  return start({ names: 'hostile', sites: SITES, themes: 5, operationDelayMs: 20, seed: 4 });
}

const siteNames = (sim: Simulator) => [...sim.fleet.sites.values()].map((s) => s.displayName);
const envNames = (sim: Simulator) => [...sim.fleet.environments.values()].map((e) => e.displayName);

/** Both streams of a command a person reads: safe, and no row stretched by one very long name. */
function expectReadable(result: CliResult, label: string): void {
  expectSafeTerminal(result.stdout, `${label} stdout`);
  expectSafeTerminal(result.stderr, `${label} stderr`);
  expect(result.stdout).not.toContain('x'.repeat(400));
}

/** Every CSV cell a spreadsheet would evaluate as a formula (a plain number is a number). */
function formulaCells(csv: string): string[] {
  return parseCsv(csv)
    .flat()
    .filter((c) => /^[=+\-@\t\r]/.test(c) && !/^[+-]?\d+(\.\d+)?$/.test(c));
}

describe('hostile names from the service', () => {
  it('inventory: a safe table, CSV no spreadsheet runs, and JSON with every name exact', async () => {
    const { sim } = await hostile();
    const env = simEnv(sim);
    const table = await runCli(['inventory'], env);
    expect(table.code, table.stderr).toBe(0);
    expectReadable(table, 'inventory');
    expect(table.stdout).toContain('\\x1b]0;pwned\\x07');

    const csv = await runCli(['inventory', '--format', 'csv'], env);
    expect(csv.code).toBe(0);
    expect(formulaCells(csv.stdout)).toEqual([]);
    const rows = parseCsv(csv.stdout);
    expect(rows.every((r) => r.length === rows[0]!.length)).toBe(true);
    expect(rows.map((r) => r[0])).toContain(`'${HOSTILE_NAMES[1]}`);
    expectSafeTerminal(csv.stdout, 'csv');
    expect(csv.stdout.trimEnd().split('\n')).toHaveLength(rows.length);

    const json = await runCli(['inventory', '--format', 'json'], env);
    expectSafeTerminal(json.stdout, 'inventory json');
    const inventory = JSON.parse(json.stdout) as { environments: { site: string; name: string }[] };
    expect(new Set(inventory.environments.map((e) => e.site))).toEqual(new Set(siteNames(sim)));
    expect(new Set(inventory.environments.map((e) => e.name))).toEqual(new Set(envNames(sim)));
  });

  it('plan, run, status and resume: safe summaries; JUnit a strict parser reads; Markdown and annotations that hold; exact report', async () => {
    const { sim } = await start({ names: 'hostile', sites: SITES, themes: 5, operationDelayMs: 20, seed: 4, failOperations: 0.5 });
    const env = simEnv(sim);
    const dir = tempDir();
    const file = writePlaybook(
      'version: 1\nname: php\nsettings: { wait: true, rate_limit: 50/s }\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n',
      dir,
    );
    const plan = await runCli(['plan', file, '-v', '--out', join(dir, 'plan.json')], env);
    expect(plan.code, plan.stderr).toBe(0);
    expectSafeTerminal(plan.stdout + plan.stderr, 'plan');
    const saved = JSON.parse(readFileSync(join(dir, 'plan.json'), 'utf8')) as { steps: { target: { site: string } }[] };
    expect(new Set(saved.steps.map((s) => s.target.site))).toEqual(new Set(siteNames(sim)));

    const summary = join(dir, 'step-summary.md');
    const report = join(dir, 'r.json');
    const run = await runCli(
      ['run', file, '--yes', '--poll-interval', '20', '--report', report, '--junit', join(dir, 'junit.xml'), '--summary-md', join(dir, 's.md')],
      {
        ...env,
        GITHUB_ACTIONS: 'true',
        GITHUB_STEP_SUMMARY: summary,
      },
    );
    expect(run.code, run.stderr).toBe(1);
    expectReadable(run, 'run');
    const written = JSON.parse(readFileSync(report, 'utf8')) as {
      summary: { failed: number };
      results: { status: string; target: { site: string }; reason?: string }[];
    };
    expect(written.summary.failed).toBeGreaterThan(3);
    expect(new Set(written.results.map((r) => r.target.site))).toEqual(new Set(siteNames(sim)));
    // The service's message names the site: the report keeps it exactly as the service sent it.
    const failed = written.results.filter((r) => r.status === 'failed');
    for (const r of failed) expect(r.reason).toContain(r.target.site);

    const junit = expectStrictXml(readFileSync(join(dir, 'junit.xml'), 'utf8')) as {
      testsuites: { testsuite: { testcase: { failure?: unknown }[] } };
    };
    expect(junit.testsuites.testsuite.testcase.filter((c) => c.failure)).toHaveLength(failed.length);

    const md = readFileSync(join(dir, 's.md'), 'utf8');
    expect(readFileSync(summary, 'utf8')).toBe(md);
    expectSafeTerminal(md, 'markdown');
    const unescaped = md.replace(/\\./g, '');
    for (const row of unescaped.split('\n').filter((l) => l.startsWith('|'))) expect(row.split('|')).toHaveLength(10);
    expect(unescaped).not.toMatch(/<b>|\]\(http|!\[/);
    expect(md.split('\n').filter((l) => l.startsWith('- failed '))).toHaveLength(failed.length);

    const annotations = run.stdout.split('\n').filter((l) => l.startsWith('::'));
    expect(annotations).toHaveLength(failed.length);
    for (const a of annotations) expect(a).toMatch(/^::error title=sitefleet php%3A php::failed [^\r\n]*(could not complete the change|…)$/);

    const status = await runCli(['status', report], env);
    expectReadable(status, 'status');
    const resume = await runCli(['resume', report, '--yes'], env);
    expect(resume.stdout).toMatch(/nothing left to send/);
    expectReadable(resume, 'resume');
  });

  it('backups: a safe table, CSV and exact JSON', async () => {
    const { sim } = await hostile();
    const env = simEnv(sim);
    const table = await runCli(['backups', '--max-age', '1h'], env);
    expect(table.code).toBe(1); // some environments have no backup that young
    expectReadable(table, 'backups');
    expect(table.stdout).toMatch(/environments have no backup younger than 1h: /);
    const csv = await runCli(['backups', '--format', 'csv'], env);
    expect(formulaCells(csv.stdout)).toEqual([]);
    const json = await runCli(['backups', '--format', 'json'], env);
    expectSafeTerminal(json.stdout, 'backups json');
    expect(new Set((JSON.parse(json.stdout) as { environment: string }[]).map((r) => r.environment))).toEqual(new Set(envNames(sim)));
  });

  it('ssh-config: only plain tokens are written; an environment whose fields are not is left out, named, and exit 1', async () => {
    const { sim } = await hostile();
    const dir = tempDir();
    const sites = join(dir, 'sites.yaml');
    // JSON is YAML: every escape survives.
    writeFileSync(sites, JSON.stringify(Object.fromEntries([...sim.fleet.sites.values()].map((s) => [s.displayName, s.id]))));
    const result = await runCli(['ssh-config', '--sites', sites], simEnv(sim));
    expect(result.code, result.stderr).toBe(1);
    expectReadable(result, 'ssh-config');
    const lines = result.stdout.split('\n').filter((l) => l !== '');
    for (const line of lines) expect(line).toMatch(/^(# sitefleet ssh-config: .*|Host [A-Za-z0-9._-]+| {2}(HostName|Port|User) [A-Za-z0-9._@:+-]+)$/);
    const written = lines.filter((l) => l.startsWith('Host ')).length;
    const left = result.stderr.split('\n').filter((l) => l.includes('its block is left out'));
    expect(written + left.length).toBe(sim.fleet.environments.size);
    expect(left.some((l) => l.includes('HostName'))).toBe(true);
    expect(left.some((l) => l.includes('Port'))).toBe(true);
    expect(left.some((l) => /HostName "ssh\.example\\n {2}ProxyCommand/.test(l))).toBe(true);
    expect(left.some((l) => /User "[^"]*\\x07/.test(l))).toBe(true);
    expect(result.stdout).not.toContain(HOSTILE_SSH.port);
    expect(result.stderr).toMatch(new RegExp(`${left.length} of ${sim.fleet.environments.size} environments left out`));
    expect(result.stderr).toContain('the rest is safe to use (--format json shows what the service sent)');

    const json = await runCli(['ssh-config', '--sites', sites, '--format', 'json'], simEnv(sim));
    expect(json.code).toBe(0);
    const raw = JSON.parse(json.stdout) as { config: { host: string } }[];
    expect(raw.map((r) => r.config.host)).toContain(HOSTILE_SSH.host);
  });

  it('ssh-config: an alias never starts with a dash, and a second environment with the same alias is left out, not shadowed', () => {
    expect(hostAlias({ site: '\u001b[31m', name: 'live' })).toBe('31m-live');
    expect(hostAlias({ site: '--', name: '!' })).toBe('environment');
    // The answer's top-level fields only: the nested twins are the fallback when these are missing.
    const config = { host: 'ssh.example', port: '2222', user: 'u1' } as SshConfig;
    const { blocks, warnings } = sshConfig([
      { env: { site: 'a b', name: 'live' }, config },
      { env: { site: 'a', name: 'b-live' }, config: { ...config, user: 'u2' } },
    ]);
    expect(blocks).toEqual(['Host a-b-live\n  HostName ssh.example\n  Port 2222\n  User u1\n']);
    expect(warnings).toEqual(["a/b-live: its Host alias a-b-live is a b/live's already; its block is left out"]);
  });

  it('doctor: a key with a hostile name is named safely; its JSON keeps the name', async () => {
    const { sim } = await hostile();
    const text = await runCli(['doctor', '--state-dir', tempDir()], simEnv(sim));
    expectReadable(text, 'doctor');
    expect(text.stdout).toMatch(/api keys .*\\x1b\]0;pwned/);
    const json = await runCli(['doctor', '--format', 'json', '--state-dir', tempDir()], simEnv(sim));
    const checks = JSON.parse(json.stdout) as { check: string; detail: string }[];
    expect(checks.find((c) => c.check === 'api keys')!.detail).toContain(HOSTILE_NAMES[0]);
  });

  it('a log line for a person follows the terminal rule, and the tool keeps its own colours', () => {
    const line = humanLine(JSON.stringify({ level: 40, msg: 'run stopping', reason: HOSTILE_NAMES.join(' ') }));
    expectSafeTerminal(line.trimEnd(), 'log line');
    const tty = { isTTY: true } as NodeJS.WriteStream;
    const previous = process.env.NO_COLOR;
    delete process.env.NO_COLOR;
    try {
      const painted = paint('red', `failed ${HOSTILE_NAMES[0]}`, tty);
      // Exactly the tool's own two sequences (red on, red off) remain.
      const ESC = '\u001b';
      expect(painted.split(ESC)).toHaveLength(3);
      expect(painted.startsWith(`${ESC}[31mfailed \\x1b]0;pwned`)).toBe(true);
      expect(painted.endsWith(`${ESC}[39m`)).toBe(true);
    } finally {
      if (previous !== undefined) process.env.NO_COLOR = previous;
    }
  });
});
