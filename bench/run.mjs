// npm run bench [-- --only known,latency]: runs the scenarios against simulators on 127.0.0.1,
// prints a table, and writes bench/results/latest.json and latest.md.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { knownLimit, latencyBound, ownOverhead, scale, sideBySide, unknownLimit } from './scenarios.mjs';
import { tempDir } from './lib.mjs';
import { coordinationCost, threeProcesses } from './coordination.mjs';
import { creationLimit } from './real-service.mjs';
import { healthChecks } from './safe-updates.mjs';
import { cacheClearCost } from './cache-clear.mjs';
import { visualChecks } from './visual.mjs';
import { restoreTime } from './restore.mjs';
import { pageRender } from './pages.mjs';
import { listingConfirm } from './listing-confirm.mjs';
import { estimateAccuracy, guardedNight } from './estimate.mjs';
import { fleetNight } from './fleet-night.mjs';
import { pluginCalls, pluginFallback, pluginScale } from './plugins.mjs';
import { coreCalls, corePlan } from './core.mjs';
import { isolationCost } from './isolate.mjs';
import { stopLivesCost } from './stop-lives.mjs';
import { startupCost } from './startup.mjs';
import { longOperations, otherWindow, overstatedLimit, rolloutAndInterrupt, twoTasks } from './watching.mjs';

const ALL = {
  known: knownLimit,
  unknown: unknownLimit,
  latency: latencyBound,
  overhead: ownOverhead,
  scale,
  peers: sideBySide,
  long: longOperations,
  two: twoTasks,
  overstated: overstatedLimit,
  window: otherWindow,
  waves: rolloutAndInterrupt,
  three: threeProcesses,
  cost: coordinationCost,
  creation: creationLimit,
  health: healthChecks,
  cache: cacheClearCost,
  visual: visualChecks,
  restore: restoreTime,
  confirm: listingConfirm,
  estimate: estimateAccuracy,
  'estimate-guarded': guardedNight,
  pages: pageRender,
  plugins: pluginScale,
  'plugin-calls': pluginCalls,
  'plugin-fallback': pluginFallback,
  core: corePlan,
  'core-calls': coreCalls,
  'isolate-4': isolationCost(4),
  'isolate-12': isolationCost(12),
  'isolate-30': isolationCost(30),
  'stop-lives': stopLivesCost,
  startup: startupCost,
  'fleet-night': fleetNight,
};
const onlyArg = process.argv.indexOf('--only');
const only = onlyArg > 0 ? process.argv[onlyArg + 1].split(',') : Object.keys(ALL);

const dir = tempDir();
const results = [];
const started = Date.now();
try {
  for (const key of only) {
    if (!ALL[key]) throw new Error(`unknown scenario ${key}; known: ${Object.keys(ALL).join(', ')}`);
    process.stderr.write(`running ${key}…\n`);
    const t0 = performance.now();
    const result = await ALL[key](dir);
    result.seconds = Math.round((performance.now() - t0) / 100) / 10;
    results.push(result);
    process.stderr.write(`  ${result.met ? 'met' : 'NOT MET'}: ${JSON.stringify(result.figures)}\n`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const lines = [
  `sitefleet benchmarks, ${new Date().toISOString()}, node ${process.version}, ${cpus().length} cores; simulator in its own process on 127.0.0.1`,
  '',
  '| scenario | figures | target | met |',
  '| --- | --- | --- | --- |',
  ...results.map(
    (r) =>
      `| ${r.name} | ${Object.entries(r.figures)
        .map(([k, v]) => `${k}: ${v}`)
        .join('<br>')} | ${r.target} | ${r.met ? 'yes' : '**no**'} |`,
  ),
  '',
  `total ${Math.round((Date.now() - started) / 1000)} s`,
];
const markdown = lines.join('\n');
process.stdout.write(`${markdown}\n`);
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(
  new URL('./results/latest.json', import.meta.url),
  `${JSON.stringify({ at: new Date().toISOString(), node: process.version, results }, null, 2)}\n`,
);
writeFileSync(new URL('./results/latest.md', import.meta.url), `${markdown}\n`);
process.exitCode = results.every((r) => r.met) ? 0 : 1;
