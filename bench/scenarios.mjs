// The six measurements of issue 5. Each returns { name, figures, target, met }.
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { Pool } from 'undici';
import { busiestWindow, logRecord, round, run, runCli, sitesFor, startSim, writePlaybook } from './lib.mjs';

const phpPlaybook = (rate, concurrency, extra = '') =>
  `version: 1\nname: bench\nsettings: { rate_limit: ${rate}, concurrency: ${concurrency} }\ntasks:\n  - { name: php, action: php.set_version, target: all${extra}, with: { php_version: "8.3" } }\n`;

function writes(log) {
  return log.filter((e) => e.method !== 'GET');
}

/** Calls per second as the server saw them arrive, over the write phase. */
function arrivalRate(entries) {
  const times = entries.map((e) => e.at).sort((a, b) => a - b);
  return ((times.length - 1) / (times.at(-1) - times[0])) * 1000;
}

export async function knownLimit(dir) {
  const R = 50;
  const sim = await startSim(['--size', String(sitesFor(1500)), '--themes', '4', '--rate', `${R}/s`, '--op-delay', '0'], dir);
  try {
    const report = join(dir, 'known.json');
    const res = await runCli(['run', writePlaybook(dir, phpPlaybook(`${R}/s`, 8)), '--yes', '--report', report, '--state-dir', dir], sim.env);
    const log = sim.log();
    const w = writes(log).filter((e) => e.status !== 429);
    const rate = arrivalRate(w);
    const limited = log.filter((e) => e.status === 429).length;
    return {
      name: '1. known limit',
      figures: {
        calls: w.length,
        limit_per_s: R,
        achieved_per_s: round(rate),
        ratio: round(rate / R, 3),
        answered_429: limited,
        busiest_window: busiestWindow(
          log.map((e) => e.at),
          1000,
        ),
        exit: res.code,
      },
      target: 'achieved ≥ 97% of R, zero 429',
      met: rate / R >= 0.97 && limited === 0 && res.code === 0,
    };
  } finally {
    await sim.stop();
  }
}

export async function unknownLimit(dir) {
  const R = 50;
  const sim = await startSim(['--size', String(sitesFor(1500)), '--themes', '4', '--rate', `${R}/s`, '--op-delay', '0'], dir);
  try {
    const report = join(dir, 'unknown.json');
    const logFile = join(dir, 'unknown.log');
    await runCli(['run', writePlaybook(dir, phpPlaybook(`${3 * R}/s`, 8)), '--yes', '--report', report, '--state-dir', dir, '--log-file', logFile], sim.env);
    const log = sim.log();
    const ok = writes(log).filter((e) => e.status === 202);
    const rate = arrivalRate(ok);
    const limited = log.filter((e) => e.status === 429).length;
    const summary = JSON.parse((await import('node:fs')).readFileSync(report, 'utf8')).summary;
    const finished = logRecord(logFile, 'run finished');
    return {
      name: '2. unknown limit (playbook 3× too high)',
      figures: {
        calls: ok.length,
        real_limit_per_s: R,
        configured_per_s: 3 * R,
        achieved_per_s: round(rate),
        ratio: round(rate / R, 3),
        answered_429: limited,
        share_429: round(limited / log.length, 4),
        learned_limit: finished.learned_limit,
        accepted: summary.accepted,
        total: summary.total,
      },
      target: 'achieved ≥ 85% of the real limit, ≤ 2% answered 429, every step accepted',
      met: rate / R >= 0.85 && limited / log.length <= 0.02 && summary.accepted === summary.total,
    };
  } finally {
    await sim.stop();
  }
}

export async function latencyBound(dir) {
  const C = 32;
  const sim = await startSim(['--size', String(sitesFor(800)), '--themes', '4', '--latency', '100-200', '--op-delay', '0'], dir);
  try {
    const res = await runCli(
      ['run', writePlaybook(dir, phpPlaybook('1000000/s', C)), '--yes', '--report', join(dir, 'latency.json'), '--state-dir', dir],
      sim.env,
    );
    const w = writes(sim.log());
    const meanLatency = w.reduce((s, e) => s + (e.answered_at - e.at), 0) / w.length;
    const wall = Math.max(...w.map((e) => e.answered_at)) - Math.min(...w.map((e) => e.at));
    const ideal = (w.length * meanLatency) / C;
    return {
      name: '3. latency-bound (100–200 ms, C=32)',
      figures: {
        calls: w.length,
        concurrency: C,
        mean_latency_ms: round(meanLatency, 1),
        wall_ms: Math.round(wall),
        ideal_ms: Math.round(ideal),
        ratio: round(wall / ideal, 3),
        exit: res.code,
      },
      target: 'wall ≤ 1.15 × calls × mean latency / C',
      met: wall / ideal <= 1.15 && res.code === 0,
    };
  } finally {
    await sim.stop();
  }
}

/** A bare undici loop: `concurrency` workers sending the same PUTs back to back. */
async function bareLoop(sim, bodies, concurrency) {
  const pool = new Pool(sim.base_url, { connections: concurrency, pipelining: 1 });
  const headers = { authorization: `Bearer ${sim.token}`, 'content-type': 'application/json' };
  let next = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++];
        const res = await pool.request({ method: 'PUT', path: '/v2/sites/tools/denied-ips', headers, body: JSON.stringify(body) });
        await res.body.text();
      }
    }),
  );
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  await pool.close();
  return { wall, cpuMs: (used.user + used.system) / 1000 };
}

export async function ownOverhead(dir) {
  const C = 64;
  const sim = await startSim(['--size', String(sitesFor(5000)), '--themes', '4', '--op-delay', '0'], dir);
  try {
    const logFile = join(dir, 'overhead.log');
    const playbook = `version: 1\nname: overhead\nsettings: { rate_limit: 1000000/s, concurrency: ${C} }\ntasks:\n  - { name: ips, action: denied_ips.set, target: all, with: { ip_list: ["203.0.113.7"] } }\n`;
    const res = await runCli(
      ['run', writePlaybook(dir, playbook), '--yes', '--report', join(dir, 'overhead.json'), '--state-dir', dir, '--log-file', logFile],
      sim.env,
    );
    const w = writes(sim.log());
    const sfWall = Math.max(...w.map((e) => e.answered_at)) - Math.min(...w.map((e) => e.at));
    const finished = logRecord(logFile, 'run finished');
    const bodies = w.map((e) => e.body);
    const bare = await bareLoop(sim, bodies, C);
    const sfRate = (w.length / sfWall) * 1000;
    const bareRate = (bodies.length / bare.wall) * 1000;
    return {
      name: '4. own overhead (no limit, C=64, journal on)',
      figures: {
        calls: w.length,
        sitefleet_per_s: Math.round(sfRate),
        bare_undici_per_s: Math.round(bareRate),
        ratio: round(sfRate / bareRate, 3),
        sitefleet_cpu_ms_per_call: round((finished.cpu_user_ms + finished.cpu_system_ms) / w.length, 3),
        bare_cpu_ms_per_call: round(bare.cpuMs / bodies.length, 3),
        exit: res.code,
      },
      target: 'throughput ≥ 50% of a bare undici loop',
      met: sfRate / bareRate >= 0.5 && res.code === 0,
    };
  } finally {
    await sim.stop();
  }
}

export async function scale(dir) {
  const sim = await startSim(['--size', String(sitesFor(20000)), '--themes', '16', '--op-delay', '0'], dir);
  try {
    const logFile = join(dir, 'scale.log');
    // 2,000 calls a second: a run of about ten seconds, long enough for report snapshots to be taken.
    const playbook =
      'version: 1\nname: scale\nsettings: { rate_limit: 2000/s, concurrency: 64 }\ntasks:\n  - { name: ips, action: denied_ips.set, target: all, with: { ip_list: ["203.0.113.7"] } }\n';
    const res = await runCli(
      ['run', writePlaybook(dir, playbook), '--yes', '--report', join(dir, 'scale.json'), '--state-dir', dir, '--log-file', logFile],
      sim.env,
    );
    const read = logRecord(logFile, 'fleet read');
    const plan = logRecord(logFile, 'plan built');
    const finished = logRecord(logFile, 'run finished');
    return {
      name: '5. scale (20,000 environments, 16 themes)',
      figures: {
        environments: read.environments,
        inventory_read_ms: read.wall_ms,
        plan_cpu_ms: plan.cpu_ms,
        steps: finished.steps,
        run_wall_ms: finished.wall_ms,
        max_rss_mb: finished.max_rss_mb,
        report_snapshots_during_run: finished.report_snapshots,
        report_snapshot_ms_max: finished.report_snapshot_ms_max,
        report_snapshot_share_of_run: round(finished.report_snapshot_ms_total / finished.wall_ms, 4),
        final_report_write_ms: finished.report_final_write_ms,
        exit: res.code,
      },
      target: 'plan ≤ 3 s CPU after the listing is read, ≤ 400 MB RSS, report snapshots ≤ 5% of the run’s time',
      met:
        read.environments >= 20000 &&
        plan.cpu_ms <= 3000 &&
        finished.max_rss_mb <= 400 &&
        finished.report_snapshots > 0 &&
        finished.report_snapshot_ms_total / finished.wall_ms <= 0.05 &&
        res.code === 0,
    };
  } finally {
    await sim.stop();
  }
}

/** A plain script: one request after another; on 429 it sleeps Retry-After and tries again. */
async function sequentialLoop(sim, envIds) {
  const pool = new Pool(sim.base_url, { connections: 1 });
  const headers = { authorization: `Bearer ${sim.token}`, 'content-type': 'application/json' };
  const started = performance.now();
  for (const id of envIds) {
    for (;;) {
      const res = await pool.request({
        method: 'PUT',
        path: '/v2/sites/tools/modify-php-version',
        headers,
        body: JSON.stringify({ environment_id: id, php_version: '8.3' }),
      });
      await res.body.text();
      if (res.statusCode !== 429) break;
      await new Promise((r) => setTimeout(r, Number(res.headers['retry-after'] ?? 1) * 1000));
    }
  }
  await pool.close();
  return performance.now() - started;
}

function ansiblePlaybook(sim, envIds, dir) {
  const inventory = [
    '[envs]',
    ...envIds.map((id, i) => `env${i} env_id=${id}`),
    '',
    '[envs:vars]',
    'ansible_connection=local',
    `ansible_python_interpreter=${'/usr/bin/python3'}`,
  ].join('\n');
  writeFileSync(join(dir, 'hosts.ini'), `${inventory}\n`);
  const play = `- hosts: envs
  gather_facts: false
  tasks:
    - name: set PHP version
      throttle: 8
      ansible.builtin.uri:
        url: "${sim.base_url}/v2/sites/tools/modify-php-version"
        method: PUT
        headers: { Authorization: "Bearer ${sim.token}" }
        body_format: json
        body: { environment_id: "{{ env_id }}", php_version: "8.3" }
        status_code: [202]
      register: result
      until: result.status != 429
      retries: 20
      delay: 1
`;
  writeFileSync(join(dir, 'php.yml'), play);
  return ['-i', join(dir, 'hosts.ini'), join(dir, 'php.yml'), '--forks', '20'];
}

export async function sideBySide(dir) {
  const R = 20;
  const N = 200;
  // A real API answers in 100–200 ms: a plain loop is then bound by latency, not by the limit.
  const simArgs = ['--size', String(sitesFor(N)), '--themes', '4', '--rate', `${R}/s`, '--latency', '100-200', '--op-delay', '0', '--seed', '3'];
  const rows = [];
  const measure = async (peer, fn) => {
    const sim = await startSim(simArgs, dir);
    try {
      const wallMs = await fn(sim);
      const log = sim.log();
      const puts = log.filter((e) => e.method === 'PUT');
      const accepted = new Set(puts.filter((e) => e.status === 202).map((e) => e.body.environment_id));
      const writePhase = Math.max(...puts.map((e) => e.answered_at)) - Math.min(...puts.map((e) => e.at));
      rows.push({
        peer,
        wall_ms: Math.round(wallMs),
        write_phase_ms: Math.round(writePhase),
        answered_429: log.filter((e) => e.status === 429).length,
        ended_correctly: accepted.size,
      });
    } finally {
      await sim.stop();
    }
  };
  let envIds = [];
  await measure('sitefleet', async (sim) => {
    const res = await runCli(['run', writePlaybook(dir, phpPlaybook(`${R}/s`, 8)), '--yes', '--report', join(dir, 'side.json'), '--state-dir', dir], sim.env);
    envIds = JSON.parse((await import('node:fs')).readFileSync(join(dir, 'side.json'), 'utf8')).results.map((r) => r.target.env_id);
    return res.wallMs;
  });
  await measure('sequential loop', (sim) => sequentialLoop(sim, envIds));
  const which = await run('sh', ['-c', 'command -v ansible-playbook']);
  if (which.code === 0) {
    await measure('ansible-playbook (uri, forks 20, throttle 8)', async (sim) => {
      const res = await run('ansible-playbook', ansiblePlaybook(sim, envIds, dir), { ANSIBLE_HOST_KEY_CHECKING: 'False', ANSIBLE_STDOUT_CALLBACK: 'dense' });
      return res.wallMs;
    });
  } else {
    rows.push({ peer: 'ansible-playbook', skipped: 'not installed (apt-get install ansible-core)' });
  }
  const sf = rows[0];
  return {
    name: `6. side by side: PHP version on ${envIds.length} environments at ${R}/s`,
    figures: Object.fromEntries(
      rows.map((r) => [
        r.peer,
        r.skipped ??
          `wall ${r.wall_ms} ms (writes ${r.write_phase_ms} ms, ${round(r.write_phase_ms / sf.write_phase_ms, 2)}× sitefleet), ${r.answered_429} × 429, ${r.ended_correctly}/${envIds.length} ok`,
      ]),
    ),
    rows,
    target: 'sitefleet: no 429, every environment changed, writes no slower than any alternative',
    met: sf.answered_429 === 0 && sf.ended_correctly === envIds.length && rows.slice(1).every((r) => r.skipped || r.write_phase_ms >= sf.write_phase_ms * 0.98),
  };
}
