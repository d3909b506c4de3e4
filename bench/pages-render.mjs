// Child of bench/pages.mjs: renders the run page of a made-up report of N steps (and its journal's
// records) with the built modules, in a process of its own so its peak memory is the page's alone.
// Prints {ms, max_rss_mb, bytes}. The journal is folded from records in memory: reading and checking
// the file is `resume`'s cost, measured elsewhere.
import { Buffer } from 'node:buffer';
import { runPage } from '../dist/report/html/run-page.js';
import { runTimes } from '../dist/report/html/spans.js';
import { summarize } from '../dist/report/report.js';

const N = Number(process.argv[2] ?? 10_000);
const T0 = Date.parse('2026-11-22T02:00:00Z');
const RUN_ID = '11111111-2222-4333-8444-555555555555';
const CONCURRENCY = Number(process.argv[3] ?? 8);
const OP_MS = 3_000;

const results = [];
const records = [{ t: 'start', v: 1, run_id: RUN_ID, playbook: 'p.yaml', report: 'r.json', started_at: new Date(T0).toISOString(), plan: { settings: {} } }];
for (let i = 0; i < N; i++) {
  const status = i % 37 === 0 ? 'failed' : i % 211 === 0 ? 'unknown' : 'succeeded';
  const r = {
    step_id: `0:env-${i}`,
    task: 'Theme updates',
    action: 'themes.update',
    target: { env_id: `env-${i}`, site: `site-${String(i).padStart(5, '0')}`, environment: 'live' },
    request: { method: 'PUT', path: `/sites/environments/env-${i}/themes/bulk-update`, body: { themes: [{ name: 'astra' }] } },
    status,
    http_status: 202,
    operation_id: `op-${i}`,
    attempts: 1,
    error: null,
    reason: status === 'succeeded' ? null : `the operation failed on site-${i}: could not complete the change`,
    precondition: 'astra 4.1.0 → 4.1.1',
    health: { url: `https://site-${i}.example/`, outcome: status === 'failed' ? 'unhealthy' : 'healthy', before: 'HTTP 200', after: 'HTTP 200' },
    wave: i === 0 ? 0 : i < N / 4 ? 1 : 2,
  };
  results.push(r);
  const send = T0 + Math.floor(i / CONCURRENCY) * (OP_MS + 50);
  records.push({ t: 'intent', step: r.step_id, attempt: 1, at: send });
  records.push({ t: 'result', step: r.step_id, result: { ...r, status: 'accepted' }, at: send + 40 });
  records.push({ t: 'update', step: r.step_id, result: r, at: send + OP_MS });
}
const report = {
  version: 1,
  run_id: RUN_ID,
  playbook: 'p.yaml',
  name: 'themes',
  company: RUN_ID,
  mode: 'run',
  started_at: new Date(T0).toISOString(),
  finished_at: new Date(T0 + 3_600_000).toISOString(),
  stopped: null,
  summary: summarize(results),
  results,
};

const before = process.memoryUsage().rss;
const t0 = performance.now();
const page = runPage({ report, reportPath: 'r.json', times: runTimes(records) });
const ms = performance.now() - t0;
const maxRss = process.resourceUsage().maxRSS * 1024;
process.stdout.write(
  `${JSON.stringify({ ms: Math.round(ms), max_rss_mb: Math.round(maxRss / 2 ** 20), rss_before_mb: Math.round(before / 2 ** 20), bytes: Buffer.byteLength(page) })}\n`,
);
