import { spawn } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { humanLine } from '../../src/app/logger.js';
import { CLI, runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

describe('outputs for CI and cron', () => {
  it('--junit, --summary-md, GITHUB_STEP_SUMMARY and ::error annotations tell the same story as the report', async () => {
    const { sim } = await start({ sites: 12, operationDelayMs: 0, seed: 3 });
    sim.setFaults('503=0.5', { writesOnly: true }); // about half the backups end unknown (a creating call is not re-sent)
    const dir = tempDir();
    // At 50/s: the service's default 2/s would spend seconds on backups, which are not what is looked at.
    const file = writePlaybook(
      'version: 1\nname: nightly\nsettings: { rate_limit: 50/s }\ntasks:\n  - { name: backup, action: backups.create, target: all, with: { tag: n } }\n',
      dir,
    );
    const summary = join(dir, 'step-summary.md');
    writeFileSync(summary, '# earlier step\n');
    const report = join(dir, 'r.json');
    const result = await runCli(['run', file, '--yes', '--report', report, '--junit', join(dir, 'junit.xml'), '--summary-md', join(dir, 's.md')], {
      ...simEnv(sim),
      GITHUB_ACTIONS: 'true',
      GITHUB_STEP_SUMMARY: summary,
    });
    expect(result.code).toBe(1);
    const parsed = JSON.parse(readFileSync(report, 'utf8')) as { summary: { total: number; unknown: number; failed: number } };
    const junit = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(readFileSync(join(dir, 'junit.xml'), 'utf8')) as {
      testsuites: {
        tests: string;
        failures: string;
        testsuite: { name: string; tests: string; failures: string; testcase: { failure?: { message: string } }[] }[];
      };
    };
    expect(Number(junit.testsuites.tests)).toBe(parsed.summary.total);
    expect(Number(junit.testsuites.failures)).toBe(parsed.summary.failed + parsed.summary.unknown);
    expect(parsed.summary.unknown).toBeGreaterThan(0);
    const backup = [junit.testsuites.testsuite].flat()[0]!;
    expect(backup.name).toBe('backup');
    expect(Number(backup.failures)).toBe(parsed.summary.unknown);
    expect(backup.testcase.find((c) => c.failure)!.failure!.message).toMatch(/a creating call is not re-sent/);
    const md = readFileSync(join(dir, 's.md'), 'utf8');
    expect(md).toMatch(/\| backup \| \d+ \| \d+ \| 0 \| 0 \| \d+ \| 0 \|/);
    expect(md).toContain('failed, held or unknown:');
    expect(readFileSync(summary, 'utf8')).toBe(`# earlier step\n${md}`);
    const annotations = result.stdout.split('\n').filter((l) => l.startsWith('::error '));
    expect(annotations.length).toBe(parsed.summary.failed + parsed.summary.unknown);
    expect(annotations[0]).toMatch(/^::error title=sitefleet nightly%3A backup::unknown /);
  });

  it('--token is refused with the way to pass a token, without echoing it; a token file others can read gets a warning', async () => {
    const refused = await runCli(['inventory', '--token', 'sekret-value-123'], { SITEFLEET_BASE_URL: 'http://127.0.0.1:9' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--token is not taken .*set SITEFLEET_TOKEN or pass --token-file FILE/);
    expect(refused.stderr + refused.stdout).not.toContain('sekret-value-123');

    const { sim } = await start({ sites: 2 });
    const tokenFile = join(tempDir(), 'token');
    writeFileSync(tokenFile, sim.token);
    chmodSync(tokenFile, 0o644);
    const env = { ...simEnv(sim), SITEFLEET_TOKEN: undefined };
    const open = await runCli(['inventory', '--token-file', tokenFile], env);
    expect(open.code).toBe(0);
    expect(open.stderr).toContain(`--token-file ${tokenFile} can be read by others (mode 644); make it private with: chmod 600 ${tokenFile}`);
    expect(open.stderr).not.toContain(sim.token);
    chmodSync(tokenFile, 0o600);
    expect((await runCli(['inventory', '--token-file', tokenFile], env)).stderr).toBe('');
  });

  it('on a terminal, log records are one short line of text', () => {
    const line = humanLine('{"level":40,"time":"2026-11-22T00:00:00.000Z","app":"sitefleet","reason":"interrupted","msg":"run stopping"}');
    expect(line).toBe('sitefleet: warning: run stopping (reason: interrupted)\n');
  });
});

describe('on a terminal', () => {
  it('the prompt names the base URL and company; the summary counts the 429s; a pause shows in the progress line', { timeout: 60_000 }, async () => {
    const { sim } = await start({ sites: 6, operationDelayMs: 0, rate: '5/s' });
    const dir = tempDir();
    const file = writePlaybook(
      'version: 1\nname: t\nsettings: { rate_limit: 100/s, concurrency: 4 }\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n',
      dir,
    );
    const env = simEnv(sim);
    const cli = (args: string) => `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} ${args}`;
    // `script` gives the command a real terminal, as a person at a shell has (async: the simulator runs in this process).
    const onTerminal = (args: string, input = '') =>
      new Promise<{ status: number | null; stdout: string }>((resolve) => {
        const child = spawn('script', ['-qec', cli(args), '/dev/null'], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
        let stdout = '';
        // The answer is typed once the question is on the screen, as a person would.
        child.stdout.on('data', (d: Buffer) => {
          stdout += d.toString();
          if (input && stdout.includes('[y/N]') && child.stdin.writable) child.stdin.end(input);
        });
        child.on('close', (status) => resolve({ status, stdout }));
        if (!input) child.stdin.end();
      });
    const answeredNo = await onTerminal(`run ${file} --report ${join(dir, 'n.json')}`, 'n\n');
    expect(answeredNo.stdout).toContain(`to ${sim.baseUrl} for company ${sim.companyId}`);
    expect(answeredNo.stdout).toContain('not confirmed; nothing was sent');
    expect(sim.log.filter((e) => e.method !== 'GET')).toEqual([]);

    // What a run draws on a terminal, in this process: its streams say they are one (the prompt above showed a real one is seen).
    const ran = await runCli(['run', file, '--yes', '--report', join(dir, 'y.json')], env, { tty: true });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/the service answered 429 \(rate limited\) \d+ times?; the budget kept to/);
    expect(ran.stderr).toMatch(/paused by the service's rate limit: \ds/);
  });
});
