// Helpers shared by the benchmark scenarios: a simulator in its own process, the built CLI, logs.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

export const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));

export function tempDir() {
  return mkdtempSync(join(tmpdir(), 'sitefleet-bench-'));
}

/** Starts `sitefleet sim` in its own process (so it has a core of its own) and waits for its start line. */
export async function startSim(args, dir) {
  const logFile = join(dir, `sim-${Date.now()}.jsonl`);
  const child = spawn(process.execPath, [CLI, 'sim', '--json', '--log', logFile, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`simulator exited ${code}`)));
  });
  const info = JSON.parse(line);
  return {
    ...info,
    logFile,
    env: { SITEFLEET_BASE_URL: info.base_url, SITEFLEET_TOKEN: info.token, SITEFLEET_COMPANY: info.company_id },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
    log() {
      return readFileSync(logFile, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    },
  };
}

/** Runs a command, returning exit code, wall time and output. */
export function run(command, args, env = {}, options = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    // A bounded run: a scenario that hangs is a finding, not a bench that never ends.
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 600_000);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, wallMs: performance.now() - started, stdout, stderr });
    });
  });
}

export function runCli(args, env, options) {
  return run(process.execPath, [CLI, ...args], env, options);
}

export function writePlaybook(dir, text, name = 'playbook.yaml') {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** pino JSON lines → the record whose msg is `msg` (the last one). */
export function logRecord(file, msg) {
  const records = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  return records.filter((r) => r.msg === msg).at(-1);
}

/** The most arrivals in any window of `periodMs`. */
export function busiestWindow(times, periodMs) {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i] - sorted[j] >= periodMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** Sites that give at least `envs` environments for the seeded fleet (about 1.7 per site; a little margin keeps us at or over the count). */
export function sitesFor(envs) {
  return Math.ceil(envs / 1.66);
}

export const round = (x, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

/** A real redis-server on a free 127.0.0.1 port, without persistence (Debian's package; `.ci/run` installs it). */
export async function startRedis() {
  const { createServer } = await import('node:net');
  const port = await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port: p } = server.address();
      server.close(() => resolve(p));
    });
  });
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (/Ready to accept connections/.test(out)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited ${code}`)));
  });
  return {
    url: `redis://127.0.0.1:${port}/0`,
    async stop() {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}
