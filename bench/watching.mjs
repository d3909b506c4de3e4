// Issue 8's measurements: waiting for operations at the service's pace, and learning its limit.
// Each returns { name, figures, target, met }. Times are the simulator's (its request log).
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { busiestWindow, round, runCli, sitesFor, startSim, writePlaybook } from './lib.mjs';

const isPoll = (e) => e.endpoint === 'getOperation';
const isWrite = (e) => e.method !== 'GET';

/** First write's arrival to last poll's answer, polls per accepted operation, 429s, blocked failures. */
function watchFigures(log) {
  const writes = log.filter(isWrite);
  const polls = log.filter(isPoll);
  const accepted = writes.filter((e) => e.status === 202).length;
  const first = Math.min(...writes.map((e) => e.at));
  const last = Math.max(...log.map((e) => e.answered_at));
  return {
    writes: writes.length,
    accepted,
    polls: polls.length,
    wallMs: last - first,
    pollsPerOp: polls.length / Math.max(1, accepted),
    limited: log.filter((e) => e.status === 429).length,
  };
}

function readReport(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** Target 1: N environments, operations of several seconds, concurrency well below N. */
export async function longOperations(dir) {
  const N = 120;
  const R = 20;
  const [dMin, dMax] = [6000, 10_000];
  const sim = await startSim(['--size', String(sitesFor(N)), '--themes', '4', '--rate', `${R}/s`, '--op-delay', `${dMin}-${dMax}`, '--seed', '11'], dir);
  try {
    const report = join(dir, 'long.json');
    const pb = `version: 1\nname: long\nsettings: { rate_limit: ${R}/s, concurrency: 8, wait: true }\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n`;
    const res = await runCli(['run', writePlaybook(dir, pb, 'long.yaml'), '--yes', '--report', report, '--state-dir', dir], sim.env);
    const f = watchFigures(sim.log());
    const n = f.accepted;
    const bound = Math.max((2 * n * 1000) / R, (n * 1000) / R + dMax);
    const summary = readReport(report).summary;
    return {
      name: `7. long operations, few slots (${n} envs, ops ${dMin / 1000}–${dMax / 1000} s, ${R}/s, C=8, wait)`,
      figures: {
        operations: n,
        wall_ms: Math.round(f.wallMs),
        bound_ms: Math.round(bound),
        ratio: round(f.wallMs / bound, 3),
        polls_per_op: round(f.pollsPerOp, 2),
        answered_429: f.limited,
        succeeded: summary.succeeded,
        exit: res.code,
      },
      target: 'wall ≤ 1.3 × max(2N/R, N/R + longest op); ≤ 1.5 polls per operation; zero 429',
      met: f.wallMs / bound <= 1.3 && f.pollsPerOp <= 1.5 && f.limited === 0 && summary.succeeded === n && res.code === 0,
    };
  } finally {
    await sim.stop();
  }
}

/** Target 2: two waiting tasks on the same environments (backup, then PHP). */
export async function twoTasks(dir) {
  const N = 60;
  const R = 20;
  const [dMin, dMax] = [1000, 3000];
  const sim = await startSim(['--size', String(sitesFor(N)), '--themes', '4', '--rate', `${R}/s`, '--op-delay', `${dMin}-${dMax}`, '--seed', '12'], dir);
  try {
    const report = join(dir, 'two.json');
    const pb = `version: 1\nname: two\nsettings: { rate_limit: ${R}/s, concurrency: 8, wait: true }\ntasks:\n  - { name: backup, action: backups.create, target: all, with: { tag: nightly } }\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n`;
    const res = await runCli(['run', writePlaybook(dir, pb, 'two.yaml'), '--yes', '--report', report, '--state-dir', dir], sim.env);
    const log = sim.log();
    const f = watchFigures(log);
    const blocked = readReport(report).results.filter((r) => /blocked/i.test(r.reason ?? '')).length;
    // Tasks run in order (a task's failure budget decides whether the next starts), so the least
    // possible time is, per task, the larger of its requests at R and its writes plus the longest operation.
    const perTask = f.accepted / 2;
    const least = 2 * Math.max((2 * perTask * 1000) / R, (perTask * 1000) / R + dMax);
    const summary = readReport(report).summary;
    return {
      name: `8. two waiting tasks on the same ${perTask} environments (ops ${dMin / 1000}–${dMax / 1000} s, ${R}/s)`,
      figures: {
        operations: f.accepted,
        wall_ms: Math.round(f.wallMs),
        least_ms: Math.round(least),
        ratio: round(f.wallMs / least, 3),
        polls_per_op: round(f.pollsPerOp, 2),
        blocked_resends: blocked,
        answered_429: f.limited,
        succeeded: summary.succeeded,
        exit: res.code,
      },
      target: 'nothing sent to a busy environment; ≤ 2 polls per operation; ≤ 1.5 × the least possible time',
      met: blocked === 0 && f.pollsPerOp <= 2 && f.wallMs / least <= 1.5 && summary.succeeded === summary.total && res.code === 0,
    };
  } finally {
    await sim.stop();
  }
}

/** Target 4: a limit the playbook overstates threefold, 600 calls at concurrency 16. */
export async function overstatedLimit(dir) {
  const R = 50;
  const sim = await startSim(['--size', String(sitesFor(600)), '--themes', '4', '--rate', `${R}/s`, '--op-delay', '0', '--seed', '13'], dir);
  try {
    const report = join(dir, 'over.json');
    const pb = `version: 1\nname: over\nsettings: { rate_limit: ${3 * R}/s, concurrency: 16 }\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n`;
    const res = await runCli(['run', writePlaybook(dir, pb, 'over.yaml'), '--yes', '--report', report, '--state-dir', dir], sim.env);
    const log = sim.log();
    const ok = log.filter((e) => isWrite(e) && e.status === 202);
    const times = ok.map((e) => e.at);
    const rate = ((times.length - 1) / (Math.max(...times) - Math.min(...times))) * 1000;
    const limited = log.filter((e) => e.status === 429).length;
    const summary = readReport(report).summary;
    return {
      name: '9. unknown limit, 600 calls at C=16 (playbook 3× too high)',
      figures: {
        calls: ok.length,
        requests: log.length,
        answered_429: limited,
        share_429: round(limited / log.length, 4),
        achieved_per_s: round(rate),
        ratio: round(rate / R, 3),
        accepted: summary.accepted,
        exit: res.code,
      },
      target: '≤ 1% of requests answered 429, ≥ 90% of the real limit, every step accepted',
      met: limited / log.length <= 0.01 && rate / R >= 0.9 && summary.accepted === summary.total && res.code === 0,
    };
  } finally {
    await sim.stop();
  }
}

/**
 * A service that counts a shorter window than the playbook: `40/10s` configured against a service
 * allowing 5 a second (the 120/min against 5/s, with a shorter long window so the bench is
 * short; Retry-After comes in whole seconds, so the service's window stays 1 s). Over time the
 * configured budget is the tighter one, so the run should go at its average, not at what a misread
 * 429 teaches ("5 per 10 s").
 */
export async function otherWindow(dir) {
  const N = 80;
  const sim = await startSim(['--size', String(sitesFor(N)), '--themes', '4', '--rate', '5/s', '--op-delay', '0', '--seed', '14'], dir);
  try {
    const report = join(dir, 'window.json');
    const pb = `version: 1\nname: window\nsettings: { rate_limit: 40/10s, concurrency: 8 }\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n`;
    const res = await runCli(['run', writePlaybook(dir, pb, 'window.yaml'), '--yes', '--report', report, '--state-dir', dir], sim.env, { timeoutMs: 180_000 });
    const log = sim.log();
    const ok = log.filter((e) => isWrite(e) && e.status === 202);
    const times = ok.map((e) => e.at);
    const rate = ((times.length - 1) / (Math.max(...times) - Math.min(...times))) * 1000;
    const allowed = Math.min(40 / 10, 5);
    const limited = log.filter((e) => e.status === 429).length;
    return {
      name: `10. a window the service counts differently (${ok.length} calls; 40/10s configured, service 5/s)`,
      figures: {
        calls: ok.length,
        achieved_per_s: round(rate),
        allowed_per_s: allowed,
        ratio: round(rate / allowed, 3),
        answered_429: limited,
        busiest_second: busiestWindow(
          log.filter((e) => e.status !== 429).map((e) => e.at),
          1000,
        ),
        exit: res.code,
      },
      target: '≥ 85% of what both limits allow on average; 429s only in the first burst (≤ concurrency)',
      met: rate / allowed >= 0.85 && limited <= 8 && res.code === 0,
    };
  } finally {
    await sim.stop();
  }
}

/**
 * Target 3: a rollout (canary, then waves) still waits for each wave's operations before the next
 * wave's first write; and Ctrl-C while operations are watched ends the run at once, leaving them
 * `accepted` for `status --wait` to finish.
 */
export async function rolloutAndInterrupt(dir) {
  const sim = await startSim(['--size', String(sitesFor(40)), '--themes', '4', '--rate', '20/s', '--op-delay', '1000-3000', '--seed', '15'], dir);
  const figures = {};
  try {
    const report = join(dir, 'waves.json');
    const pb = `version: 1\nname: waves\nsettings: { rate_limit: 20/s, concurrency: 8 }\ntasks:\n  - { name: php, action: php.set_version, target: all, rollout: { canary: 1, waves: ["30%", "100%"] }, with: { php_version: "8.3" } }\n`;
    const res = await runCli(['run', writePlaybook(dir, pb, 'waves.yaml'), '--yes', '--report', report, '--state-dir', dir], sim.env);
    const plan = JSON.parse(readFileSync(join(dir, 'waves.journal.jsonl'), 'utf8').split('\n')[0]).plan;
    const waveOf = new Map(plan.steps.map((s) => [s.target.env_id, s.wave]));
    const log = sim.log();
    const writes = log.filter((e) => isWrite(e) && e.status === 202);
    const opWave = new Map(writes.map((e) => [e.operation_id, waveOf.get(e.body.environment_id)]));
    const waves = [...new Set(waveOf.values())].sort((a, b) => a - b);
    let overlaps = 0;
    for (const w of waves.slice(1)) {
      const firstWrite = Math.min(...writes.filter((e) => waveOf.get(e.body.environment_id) === w).map((e) => e.at));
      const previousDone = Math.max(...log.filter((e) => isPoll(e) && e.status === 200 && opWave.get(e.operation_id) === w - 1).map((e) => e.answered_at));
      if (firstWrite < previousDone) overlaps++;
    }
    Object.assign(figures, { waves: waves.length, writes_before_previous_wave_done: overlaps, rollout_exit: res.code });
  } finally {
    await sim.stop();
  }
  const slow = await startSim(['--size', String(sitesFor(40)), '--themes', '4', '--op-delay', '20000-30000', '--seed', '16'], dir);
  try {
    const report = join(dir, 'int.json');
    const pb = `version: 1\nname: int\nsettings: { rate_limit: 100/s, concurrency: 8, wait: true }\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n`;
    const { spawn } = await import('node:child_process');
    const { CLI } = await import('./lib.mjs');
    const child = spawn(process.execPath, [CLI, 'run', writePlaybook(dir, pb, 'int.yaml'), '--yes', '--report', report, '--state-dir', dir], {
      env: { ...process.env, ...slow.env },
      stdio: 'ignore',
    });
    const closed = new Promise((resolve) => child.on('close', (code) => resolve({ code, at: performance.now() })));
    // Once every write is accepted and operations are being watched.
    for (;;) {
      await new Promise((r) => setTimeout(r, 100));
      const log = slow.log();
      if (log.filter((e) => isWrite(e) && e.status === 202).length >= 40 && log.some(isPoll)) break;
    }
    const sent = performance.now();
    child.kill('SIGINT');
    const { code, at } = await closed;
    const summary = readReport(report).summary;
    const status = await runCli(['status', report, '--wait', '60s'], slow.env);
    const after = readReport(report).summary;
    Object.assign(figures, {
      interrupt_to_exit_ms: Math.round(at - sent),
      interrupted_exit: code,
      left_accepted: summary.accepted,
      status_wait_exit: status.code,
      succeeded_after_status: after.succeeded,
      total: after.total,
    });
    return {
      name: '11. rollout waves wait; Ctrl-C while watching (ops 20–30 s)',
      figures,
      target: 'no write of a wave before the previous wave’s operations ended; Ctrl-C exits 130 within 1 s, steps left accepted; status --wait finishes them',
      met:
        figures.writes_before_previous_wave_done === 0 &&
        figures.rollout_exit === 0 &&
        code === 130 &&
        at - sent < 1000 &&
        summary.accepted === summary.total &&
        after.succeeded === after.total,
    };
  } finally {
    await slow.stop();
  }
}
