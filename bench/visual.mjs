// Issue 42's measurement: what `health.visual` costs a night's run. The same guarded rollout twice,
// against two fresh simulators of the same fleet: once with `health:` alone, once with
// `health.visual` too (the default viewport, gap and concurrency, the machine's Chromium). Per site:
// the screenshots and the comparing, from the run's log; the browser's memory, sampled from /proc
// while the run goes; and the share of the run the check adds.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clearInterval, setInterval } from 'node:timers';
import { round, runCli, sitesFor, startSim, writePlaybook } from './lib.mjs';

/** First intent to the journal's end: the rollout itself, checks included, without planning. */
function rolloutMs(journalPath) {
  const records = readFileSync(journalPath, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  return records.findLast((r) => r.t === 'end').at - records.find((r) => r.t === 'intent').at;
}

/**
 * Memory of every headless Chromium process playwright started (its profile folder names it), in MB:
 * their proportional set sizes (PSS), so pages the processes share are counted once, not per process.
 */
function browserRssMb() {
  let kb = 0;
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmdline.includes('playwright_chromium')) continue;
      kb += Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      // a process that ended between the listing and the read
    }
  }
  return kb / 1024;
}

async function oneRun(dir, visual, envs) {
  const sim = await startSim(['--size', String(sitesFor(envs)), '--themes', '4', '--op-delay', '1000-3000', '--site-latency', '50-150', '--seed', '42'], dir);
  const name = visual ? 'with' : 'without';
  const report = join(dir, `visual-${name}.json`);
  const logFile = join(dir, `visual-${name}.log`);
  const guard = `health: { url: "${sim.site_url}"${visual ? ', visual: true' : ''} }`;
  // As root (CI containers, this machine) Chromium cannot start its sandbox: the documented opt-out.
  const sandbox = visual && process.getuid?.() === 0 ? ', visual_sandbox: false' : '';
  const pb = `version: 1\nname: visual-${name}\nsettings: { concurrency: 8${sandbox} }\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" }, ${guard} }\n`;
  let peakMb = 0;
  const sampler = setInterval(() => (peakMb = Math.max(peakMb, browserRssMb())), 200);
  try {
    const res = await runCli(
      ['run', writePlaybook(dir, pb, `visual-${name}.yaml`), '--yes', '--report', report, '--state-dir', dir, '--log-file', logFile],
      sim.env,
    );
    const results = JSON.parse(readFileSync(report, 'utf8')).results.filter((r) => r.step_id !== null);
    const checks = readFileSync(logFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((r) => r.msg === 'visual check');
    return { exit: res.code, rolloutMs: rolloutMs(report.replace(/\.json$/, '.journal.jsonl')), results, checks, peakMb };
  } finally {
    clearInterval(sampler);
    await sim.stop();
  }
}

export async function visualChecks(dir) {
  const N = 16;
  const without = await oneRun(dir, false, N);
  const withVisual = await oneRun(dir, true, N);
  const sum = (key) => withVisual.checks.reduce((n, c) => n + (c[key] ?? 0), 0);
  const sites = withVisual.checks.length;
  const added = withVisual.rolloutMs - without.rolloutMs;
  const share = added / withVisual.rolloutMs;
  return {
    name: `20. health.visual on a night's run (${without.results.length} environments, sites 50–150 ms, ops 1–3 s, default gap 3 s, visual_concurrency 2${process.getuid?.() === 0 ? ', run as root: settings.visual_sandbox false' : ''})`,
    figures: {
      environments: without.results.length,
      sites_checked: sites,
      screenshots_per_site: round(sum('shots') / Math.max(1, sites), 1),
      screenshot_ms_per_site: Math.round(sum('shoot_ms') / Math.max(1, sites)),
      compare_ms_per_site: Math.round(sum('compare_ms') / Math.max(1, sites)),
      browser_peak_pss_mb: Math.round(withVisual.peakMb),
      rollout_ms_without: Math.round(without.rolloutMs),
      rollout_ms_with: Math.round(withVisual.rolloutMs),
      share_of_run_added: `${round(share * 100, 1)}%`,
      passed: `${withVisual.results.filter((r) => r.visual?.outcome === 'passed').length}/${withVisual.results.length}`,
      exits: `${without.exit}, ${withVisual.exit}`,
    },
    target: 'every unchanged page passes; the browser stays under 1 GB at the default concurrency; comparing costs under 1 s a site',
    met:
      without.exit === 0 &&
      withVisual.exit === 0 &&
      sites === withVisual.results.length &&
      withVisual.results.every((r) => r.visual?.outcome === 'passed') &&
      withVisual.peakMb > 0 &&
      withVisual.peakMb < 1024 &&
      sum('compare_ms') / Math.max(1, sites) < 1000,
  };
}
