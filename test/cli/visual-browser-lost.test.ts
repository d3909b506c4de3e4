import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { wrappedChromium, type WrappedChromium } from '../helpers/chromium-wrapper.js';
import { useSimulator, waitFor } from '../helpers/sim.js';
import { looked } from '../helpers/visual-run.js';

const start = useSimulator();

/** A PHP change of two sites' live environments, their front pages looked at, and one more page each when `more`. */
function playbook(sim: Simulator, more: boolean): string {
  const sites = [...sim.fleet.sites.values()].slice(0, 2).map((s) => `"${s.displayName}"`);
  return writePlaybook(`version: 1
name: lost
settings: { visual_sandbox: false } # root here: see visual-chromium.test.ts
tasks:
  - name: php
    action: php.set_version
    target: { site: [${sites.join(', ')}], environment: live }
    with: { php_version: "8.3" }
    health: { url: "${sim.siteUrl}", attempts: 1, visual: ${looked(more ? 'pages: [/about/]' : '')} }
`);
}

/**
 * The simulator's clock, stopped until `release`: no operation ends before then, so no look after a
 * write can begin, however slowly the machine takes the screenshots before them. Released, it runs an
 * hour ahead, and every operation started while it stood still has ended.
 */
function heldClock() {
  const stopped = Date.now();
  let released = false;
  return { now: () => (released ? Date.now() + 3_600_000 : stopped), release: () => void (released = true) };
}

/**
 * Runs the playbook and, once both writes reached the service (every screenshot before them taken,
 * none after: their operations cannot end while the clock stands), does `then` to the browser.
 */
async function runLosing(sim: Simulator, clock: ReturnType<typeof heldClock>, browser: WrappedChromium, more: boolean, then: () => void) {
  const reportPath = join(tempDir(), 'r.json');
  const md = join(tempDir(), 'summary.md');
  const running = runCli(['run', playbook(sim, more), '--yes', '--poll-interval', '50', '--report', reportPath, '--summary-md', md], {
    ...simEnv(sim),
    SITEFLEET_CHROMIUM: browser.path,
  });
  await waitFor(() => sim.log.filter((e) => e.method !== 'GET').length === 2, 60_000);
  then();
  clock.release();
  const result = await running;
  const report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
  return { ...result, report, writes: report.results.filter((r) => r.step_id !== null), md: readFileSync(md, 'utf8') };
}

// Chromium started twice and up to eight screenshots a run: seconds each on a loaded machine, where 30 s is too few.
describe('health.visual when the browser goes away mid-run', { timeout: 90_000 }, () => {
  // A page a site (each screenshot starts a renderer, a second of CPU): two sites' cameras open their
  // contexts again, both in the one browser started after the kill (each starting its own makes three).
  it('killed after a write: started once more, and every page is still looked at', async () => {
    const clock = heldClock();
    const { sim } = await start({ sites: 4, themes: 2, operationDelayMs: 3000, now: clock.now });
    const browser = wrappedChromium();
    const { code, writes, stdout } = await runLosing(sim, clock, browser, false, () => browser.kill());
    expect(browser.starts()).toBe(2);
    expect(writes.map((w) => [w.status, w.visual?.outcome])).toEqual([
      ['succeeded', 'passed'],
      ['succeeded', 'passed'],
    ]);
    expect(stdout).not.toContain('pages not looked at');
    expect(code).toBe(0);
  });

  it('killed and not starting again: pages not looked at after the write hold their steps (visual_unchecked), counted in the summary', async () => {
    const clock = heldClock();
    const { sim } = await start({ sites: 4, themes: 2, operationDelayMs: 3000, now: clock.now });
    const browser = wrappedChromium();
    const { code, writes, stdout, md } = await runLosing(sim, clock, browser, true, () => {
      browser.refuse();
      browser.kill();
    });
    expect(code).toBe(1);
    for (const w of writes) {
      expect(w.status).toBe('held');
      expect(w.visual!.outcome).toBe('not checked');
      expect(w.held).toMatchObject({ code: 'visual_unchecked', unchecked: 2, url: w.visual!.pages[0]!.url });
      expect(w.held!.override).toContain('look at');
      expect(w.reason).toMatch(/^visual_unchecked: not looked at, no screenshot (before|after) the write: .*could not be started again.* \(and 1 more page\)$/);
    }
    expect(stdout).toContain('pages not looked at (health.visual): 4 of 4, on 2 steps, held (visual_unchecked)');
    expect(stdout).toContain('0 failed, 2 held');
    expect(md).toMatch(/^\*\*pages not looked at .*: 4 of 4, on 2 steps, held .*visual.*unchecked.*\*\*$/m);
  });
});
