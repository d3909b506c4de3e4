import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { loadedFrom, loadHookFlags, UNBUNDLED_CLI } from '../helpers/loaded.js';
import { looked, shared } from '../helpers/visual-run.js';

const start = useSimulator();

/** A PHP change of every live environment, guarded by `health:` (and `health.visual` when given). */
function playbook(sim: Simulator, visual?: string, sandbox = false): string {
  return writePlaybook(`version: 1
name: look
settings: { visual_sandbox: ${sandbox} } # root here: see the sandbox test below
tasks:
  - name: php
    action: php.set_version
    target: { environment: live }
    with: { php_version: "8.3" }
    health: { url: "${sim.siteUrl}", attempts: 1${visual ? `, visual: ${visual}` : ''} }
`);
}

/** The files a `run` process loads (a process: what it loads is the test), what it said on stderr, and its report. */
async function runProcess(sim: Simulator, file: string): Promise<{ code: number | null; loaded: string[]; stderr: string; report: string }> {
  const report = join(tempDir(), 'r.json');
  // Asynchronously: the simulator answering the run lives in this process.
  // Operations polled at 50 ms: what this test times is what a run loads, not the watcher's first polls.
  const child = spawn(process.execPath, [...loadHookFlags(), UNBUNDLED_CLI, 'run', file, '--yes', '--poll-interval', '50', '--report', report], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...simEnv(sim) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, loaded: loadedFrom(stderr), stderr, report };
}

const BROWSER_CODE = ['/node_modules/playwright-core/', '/node_modules/pixelmatch/', '/node_modules/pngjs/'];

/**
 * A run that looks at pages (settings.visual_sandbox: false), in a process of its own, of two sites' steps:
 * read by the tests of what such a run loads, what it warns of, and what a resume of it checks (its
 * browser started and its pages shot once, not in each).
 */
const lookingRun = shared({ sites: 2, themes: 2 }, async (sim) => {
  const run = await runProcess(sim, playbook(sim, looked()));
  const report = JSON.parse(readFileSync(run.report, 'utf8')) as Report;
  return { ...run, looked: report.results.filter((r) => r.visual?.outcome === 'passed').length };
});

// Chromium's start and screenshots take seconds each on a loaded machine, where 30 s is too few.
describe('the browser is the machine’s, loaded only when a playbook looks at pages', { timeout: 90_000 }, () => {
  it('a run with health: and no visual loads no playwright-core, pixelmatch or pngjs; one with visual does', async () => {
    const { sim } = await start({ sites: 1, themes: 2 }); // one site: what is loaded does not grow with the steps sent
    const plain = await runProcess(sim, playbook(sim));
    expect(plain.code).toBe(0);
    expect(plain.loaded.some((url) => url.endsWith('/dist/app/session.js'))).toBe(true);
    for (const code of BROWSER_CODE) expect(plain.loaded.filter((url) => url.includes(code))).toEqual([]);
    const looking = await lookingRun();
    expect(looking.code).toBe(0);
    for (const code of BROWSER_CODE) expect(looking.loaded.some((url) => url.includes(code))).toBe(true);
  });

  it('without Chromium: validate warns (--strict: exit 2 at the field), doctor names what to install, run sends nothing (exit 2, one line)', async () => {
    const { sim } = await start({ sites: 3, themes: 2 });
    const file = playbook(sim, 'true');
    const noBrowser = { ...simEnv(sim), PATH: '/nonexistent' };
    const lax = await runCli(['validate', file], noBrowser);
    expect(lax.code).toBe(0);
    expect(lax.stderr).toMatch(
      /playbook\.yaml:9:\d+: tasks\.0\.health\.visual: warning: health\.visual needs Chromium and none was found .*apt-get install chromium/,
    );
    const strict = await runCli(['validate', '--strict', file], noBrowser);
    expect(strict.code).toBe(2);
    const doctor = await runCli(['doctor', file], noBrowser);
    expect(doctor.stdout).toMatch(/^fail {2}chromium {4}.*health\.visual needs Chromium.*apt-get install chromium/m);
    const seen = sim.log.length; // doctor's reads
    const run = await runCli(['run', file, '--yes', '--report', join(tempDir(), 'r.json')], noBrowser);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('health.visual needs Chromium and none was found');
    expect(sim.log).toHaveLength(seen);
    const named = await runCli(['run', file, '--yes'], { ...simEnv(sim), SITEFLEET_CHROMIUM: '/nonexistent/chromium' });
    expect(named).toMatchObject({ code: 2, stderr: expect.stringContaining('SITEFLEET_CHROMIUM=/nonexistent/chromium is not an executable file') });
  });

  it('an images folder that is a link is refused before anything is sent', async () => {
    const { sim } = await start({ sites: 3, themes: 2 });
    const dir = tempDir();
    mkdirSync(join(dir, 'elsewhere'));
    symlinkSync(join(dir, 'elsewhere'), join(dir, 'r.json.visual'));
    const run = await runCli(['run', playbook(sim, 'true'), '--yes', '--report', join(dir, 'r.json')], simEnv(sim));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('r.json.visual is not a folder of its own');
    expect(sim.log.filter((e) => e.method !== 'GET')).toHaveLength(0);
  });

  it('a resume checks what a run checks before it sends: without Chromium it sends nothing (exit 2), and a linked images folder is refused', async () => {
    const { sim, code, report } = await lookingRun();
    expect(code).toBe(0);
    const dir = dirname(report);
    // The journal as a run killed right after it began leaves it: every step still to send.
    const journal = join(dir, 'r.journal.jsonl');
    writeFileSync(journal, `${readFileSync(journal, 'utf8').split('\n')[0]!}\n`);
    const writes = () => sim.log.filter((e) => e.method !== 'GET').length;
    const before = writes();
    const noBrowser = await runCli(['resume', report, '--yes'], { ...simEnv(sim), PATH: '/nonexistent' });
    expect(noBrowser.code).toBe(2);
    expect(noBrowser.stderr).toMatch(/Chromium/);
    rmSync(join(dir, 'r.json.visual'), { recursive: true, force: true });
    mkdirSync(join(dir, 'elsewhere'));
    symlinkSync(join(dir, 'elsewhere'), join(dir, 'r.json.visual'));
    const linked = await runCli(['resume', report, '--yes'], simEnv(sim));
    expect(linked.code).toBe(2);
    expect(linked.stderr).toContain('r.json.visual is not a folder of its own');
    expect(writes()).toBe(before);
  });

  it('the sandbox stays on: as root a run says why it cannot start it and what to do (exit 2, one line, nothing sent), doctor too; the opt-out is warned of once', async () => {
    expect(process.getuid!()).toBe(0); // this machine, as CI containers: Chromium refuses its sandbox as root
    const { sim, code, stderr, looked: steps } = await lookingRun();
    expect(steps).toBe(2); // two steps that looked at pages: the opt-out is warned of once a run, not once a step
    const sandboxed = playbook(sim, looked(), true);
    const seen = sim.log.length;
    const refused = await runCli(['run', sandboxed, '--yes', '--report', join(tempDir(), 'r.json')], simEnv(sim));
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toContain(
      'health.visual: Chromium will not start its sandbox as root: run sitefleet as an unprivileged user, or in a root container set settings.visual_sandbox: false in the playbook',
    );
    expect(sim.log).toHaveLength(seen);
    const doctor = await runCli(['doctor', sandboxed], simEnv(sim));
    expect(doctor.stdout).toMatch(/^fail {2}sandbox .*Chromium will not start its sandbox as root/m);
    expect(code).toBe(0);
    expect(stderr.match(/warning: settings\.visual_sandbox: false: customer pages load in Chromium without its sandbox/g)).toHaveLength(1);
  });

  it('health.visual fields are checked at their line: restore_over must be over hold_over', async () => {
    const { sim } = await start({ sites: 3, themes: 2 });
    const bad = await runCli(['validate', playbook(sim, '{ hold_over: "30%", restore_over: "25%" }')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/playbook\.yaml:9:\d+: tasks\.0\.health\.visual\.restore_over: must be more than hold_over \(30%\)/);
    const typo = await runCli(['validate', playbook(sim, '{ hold_over: 1 }')]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/tasks\.0\.health\.visual\.hold_over/);
  });
});
