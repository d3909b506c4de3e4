// Issue 56's measurement: `sitefleet validate` of an example playbook costs ≤ 150 ms over a bare `node`
// start. Both are started in turn, one after the other, so that a machine busy with something else
// slows both alike; each figure is the median of its runs: wall time, as a shell script sees it, and the
// process's own CPU time (user + system), which a machine shared with others inflates far less.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const PLAYBOOK = fileURLToPath(new URL('../playbooks/plugin-updates.yaml', import.meta.url));
const SAY_CPU = "process.on('exit', () => { const c = process.cpuUsage(); process.stderr.write(`\\nCPU ${c.user + c.system}\\n`); });\n";

/** How long one process took, start to exit, and the CPU it used, in ms (`hook`: a module that has it say so at exit). */
function took(hook, args) {
  const t0 = performance.now();
  const res = spawnSync(process.execPath, ['--import', hook, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH } });
  const ms = performance.now() - t0;
  if (res.status !== 0) throw new Error(`node ${args.join(' ')} exited ${res.status}: ${res.stderr}`);
  return { ms, cpu: Number(/^CPU (\d+)$/m.exec(res.stderr)[1]) / 1000 };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (ms) => Math.round(ms * 10) / 10;

export async function startupCost(dir) {
  const N = 21;
  const hookFile = join(dir, 'say-cpu.mjs');
  writeFileSync(hookFile, SAY_CPU);
  const hook = pathToFileURL(hookFile).href;
  const bare = [];
  const validate = [];
  // The files a first start reads are in the page cache for the runs measured.
  took(hook, ['-e', '0']);
  took(hook, [CLI, 'validate', PLAYBOOK]);
  for (let i = 0; i < N; i++) {
    bare.push(took(hook, ['-e', '0']));
    validate.push(took(hook, [CLI, 'validate', PLAYBOOK]));
  }
  const of = (runs, key) => median(runs.map((r) => r[key]));
  const over = of(validate, 'ms') - of(bare, 'ms');
  return {
    name: `31. start-up: \`validate\` of an example playbook against a bare \`node -e 0\` (${N} runs each, in turn, medians)`,
    figures: {
      bare_node_ms: round(of(bare, 'ms')),
      validate_ms: round(of(validate, 'ms')),
      over_bare_ms: round(over),
      ratio: round(of(validate, 'ms') / of(bare, 'ms')),
      bare_node_cpu_ms: round(of(bare, 'cpu')),
      validate_cpu_ms: round(of(validate, 'cpu')),
      over_bare_cpu_ms: round(of(validate, 'cpu') - of(bare, 'cpu')),
    },
    target: 'validate ≤ 150 ms over a bare node start (wall)',
    met: over <= 150,
  };
}
