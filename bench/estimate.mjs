// Issue 21's measurement: the duration `plan` estimates against the time the run then takes. Each
// scenario runs twice, on two fresh simulators of one fleet: the first run is "last night" (its report
// is the --history the estimate learns operation times from), the second is measured: from its first
// write to its last answer, in the simulator's own log. Every run goes at its rate limit.
import { join } from 'node:path';
import { round, runCli, startSim, writePlaybook } from './lib.mjs';

/** `about 1m05s` → 65000 ms. */
export function estimateMs(stdout) {
  const m = /^estimate: about (?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?/m.exec(stdout);
  if (!m) throw new Error(`no estimate in:\n${stdout}`);
  return ((Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0)) * 60 + Number(m[3] ?? 0)) * 1000;
}

async function scenario(dir, { key, simArgs, playbook }) {
  const file = writePlaybook(dir, playbook, `estimate-${key}.yaml`);
  const night = await startSim(simArgs, dir);
  const history = join(dir, `estimate-${key}-history.json`);
  try {
    const first = await runCli(['run', file, '--yes', '--report', history, '--state-dir', dir], night.env);
    if (first.code !== 0) throw new Error(`${key}: the history run exited ${first.code}: ${first.stderr}`);
  } finally {
    await night.stop();
  }
  const sim = await startSim(simArgs, dir);
  try {
    const plan = await runCli(['plan', file, '--history', history], sim.env);
    if (plan.code !== 0) throw new Error(`${key}: plan exited ${plan.code}: ${plan.stderr}`);
    const estimate = estimateMs(plan.stdout);
    const run = await runCli(['run', file, '--yes', '--report', join(dir, `estimate-${key}.json`), '--state-dir', dir], sim.env);
    const log = sim.log();
    const writes = log.filter((e) => e.method !== 'GET');
    const first = Math.min(...writes.map((e) => e.at));
    const actual = Math.max(...log.filter((e) => e.at >= first).map((e) => e.answered_at)) - first;
    return { key, steps: writes.length, estimate, actual, ratio: estimate / actual, exit: run.code };
  } finally {
    await sim.stop();
  }
}

const SCENARIOS = [
  {
    key: 'themes',
    label: 'theme updates, waited for (listing)',
    simArgs: ['--size', '520', '--themes', '8', '--seed', '5', '--rate', '20/s', '--op-delay', '2000-6000'],
    playbook: `version: 1\nname: themes\nsettings: { rate_limit: 20/s, wait: true }\ntasks:\n  - { name: themes, action: themes.update, target: all, with: { skip_vulnerable_updates: false } }\n`,
  },
  {
    key: 'php',
    label: 'PHP versions, waited for (polled)',
    simArgs: ['--size', '200', '--seed', '6', '--rate', '20/s', '--op-delay', '2000-6000'],
    playbook: `version: 1\nname: php\nsettings: { rate_limit: 20/s, wait: true }\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n`,
  },
  {
    key: 'waves',
    label: 'PHP rollout: canary + 50% + 100%, 3 s pauses',
    simArgs: ['--size', '80', '--seed', '7', '--rate', '20/s', '--op-delay', '2000-6000'],
    playbook: `version: 1\nname: waves\nsettings: { rate_limit: 20/s }\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" }, rollout: { canary: 1, waves: ["50%", "100%"], pause: 3s } }\n`,
  },
  {
    key: 'backups',
    label: 'backups at a creating-call limit of 4/s, not waited for',
    simArgs: ['--size', '70', '--seed', '8', '--rate', '20/s', '--create-rate', '4/s'],
    playbook: `version: 1\nname: backups\nsettings: { rate_limit: 20/s, create_rate_limit: 4/s }\ntasks:\n  - { name: backups, action: backups.create, target: all, with: { tag: "nightly-{{date}}" } }\n`,
  },
];

export async function estimateAccuracy(dir) {
  const results = [];
  for (const s of SCENARIOS) results.push({ ...(await scenario(dir, s)), label: s.label });
  const figures = Object.fromEntries(
    results.map((r) => [
      r.key,
      `${r.label}: ${r.steps} writes, estimate ${round(r.estimate / 1000, 1)} s, actual ${round(r.actual / 1000, 1)} s, ratio ${round(r.ratio, 3)}, exit ${r.exit}`,
    ]),
  );
  return {
    name: '17. duration estimate against the measured run (plan --history last night’s report; runs at the limit)',
    figures,
    target: 'estimate / actual within 0.8–1.25 in every scenario; every run exit 0',
    met: results.every((r) => r.ratio >= 0.8 && r.ratio <= 1.25 && r.exit === 0),
  };
}

/**
 * Issue 55, part 5: a guarded night whose restore points wait for the creating-call limit, on the
 * real profile ten times faster than the real service: the general window 120/6s, creating calls
 * 5/6s (the real profile's 5 per period, given to the playbook as create_rate_limit too), operations
 * 1–3 s, one cache clear per environment a second, operations invisible for 0.2 s, polls from 0.1 s.
 * "Last night" is a small night of the same shape (its report is the --history); the measured night
 * is one run over 50 sites' live environments, from its first write to its last answer.
 */
export async function guardedNight(dir) {
  const base = ['--profile', 'real', '--themes', '4', '--seed', '55', '--rate', '120/6s', '--op-delay', '1000-3000'];
  const simArgs = [...base, '--op-visible-after', '200', '--site-latency', '20-50', '--clear-cache-gap', '1000'];
  const playbook = (url) =>
    `version: 1\nname: night\nsettings: { rate_limit: 120/6s, create_rate_limit: 5/6s }\ntasks:\n  - name: themes\n    action: themes.update\n` +
    `    target: { environment: live }\n    with: { skip_vulnerable_updates: false }\n    backup_first: true\n` +
    `    rollout: { canary: 1, waves: ["25%", "100%"], pause: 3s }\n    health: { url: "${url}", attempts: 1 }\n`;
  const flags = ['--poll-interval', '100', '--state-dir', dir];
  const history = join(dir, 'guarded-history.json');
  const night = await startSim(['--size', '12', ...simArgs], dir);
  try {
    const first = await runCli(
      ['run', writePlaybook(dir, playbook(night.site_url), 'guarded-history.yaml'), '--yes', '--report', history, ...flags],
      night.env,
    );
    if (first.code !== 0) throw new Error(`guarded: the history run exited ${first.code}: ${first.stderr}`);
  } finally {
    await night.stop();
  }
  const sim = await startSim(['--size', '50', ...simArgs], dir);
  try {
    const file = writePlaybook(dir, playbook(sim.site_url), 'guarded.yaml');
    const plan = await runCli(['plan', file, '--history', history, ...flags], sim.env);
    if (plan.code !== 0) throw new Error(`guarded: plan exited ${plan.code}: ${plan.stderr}`);
    const estimate = estimateMs(plan.stdout);
    const run = await runCli(['run', file, '--yes', '--report', join(dir, 'guarded.json'), ...flags], sim.env);
    const log = sim.log();
    const writes = log.filter((e) => e.method !== 'GET');
    const start = Math.min(...writes.map((e) => e.at));
    const actual = Math.max(...log.filter((e) => e.at >= start).map((e) => e.answered_at)) - start;
    const backups = writes.filter((e) => e.endpoint === 'addManualBackup' && e.status !== 429).length;
    const lane = /creating-call lane ([\dhms]+)/.exec(plan.stdout)?.[1];
    const ratio = estimate / actual;
    return {
      name: '30. a guarded night whose restore points wait for the creating-call limit (50 sites, real profile ×10: 120/6s, creating 5/6s, ops 1–3 s, canary + 25% + 100%, 3 s pauses; plan --history a small night)',
      figures: {
        restore_points: backups,
        writes: writes.filter((e) => e.endpoint === 'bulkUpdateThemes').length,
        creating_lane: lane,
        estimate_s: round(estimate / 1000, 1),
        actual_s: round(actual / 1000, 1),
        ratio: round(ratio, 3),
        exit: run.code,
      },
      target: 'estimate / actual within 0.85–1.15 in one run; the run exits 0',
      met: ratio >= 0.85 && ratio <= 1.15 && run.code === 0,
    };
  } finally {
    await sim.stop();
  }
}
