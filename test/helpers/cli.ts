import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Simulator } from '../../src/sim/server.js';
import type * as Program from '../../src/cli/program.js';
import type * as IoModule from '../../src/app/io.js';

export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
export const PLAYBOOKS = fileURLToPath(new URL('../../playbooks/', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunningCli {
  child: ChildProcess;
  /** What it printed to stderr so far. */
  stderr(): string;
  done: Promise<CliResult>;
}

/**
 * Starts the built CLI in a process of its own, as a user would; killed after `timeoutMs`. For what
 * only a process shows: signals, SIGKILL and crash safety, locks between processes, `bin` itself.
 */
export function startCli(args: string[], env: Record<string, string | undefined> = {}, options: { timeoutMs?: number; input?: string } = {}): RunningCli {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  child.stdin.end(options.input ?? '');
  return { child, stderr: () => stderr, done };
}

/** The built CLI's entry point and io, from dist/ module by module (what users run is their bundle), loaded once per worker. */
let built: Promise<[typeof Program, typeof IoModule]> | undefined;
function builtCli(): Promise<[typeof Program, typeof IoModule]> {
  built ??= Promise.all([
    import(pathToFileURL(join(CLI, '../program.js')).href) as Promise<typeof Program>,
    import(pathToFileURL(join(CLI, '../../app/io.js')).href) as Promise<typeof IoModule>,
  ]);
  return built;
}

/**
 * Runs the built CLI in this process (`main(argv, io)`), with the given environment and input: what a
 * user sees on stdout and stderr, and the exit code. Much cheaper than a process; the simulator keeps
 * answering meanwhile, as both share this event loop. `now`: the wall clock release ages are judged
 * by (the io's clock), for tests that move days ahead without waiting. `tty`: its streams say they are
 * a terminal (what a process on a real one shows first is a test of its own: ci-outputs.test.ts).
 */
export async function runCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  options: { input?: string; now?: () => number; tty?: boolean } = {},
): Promise<CliResult> {
  const [{ main }, { capturedIo }] = await builtCli();
  const io = capturedIo({
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...env },
    input: options.input,
    now: options.now,
    tty: options.tty,
  });
  const code = await main(args, io);
  return { code, signal: null, stdout: io.stdout.text, stderr: io.stderr.text };
}

/**
 * The built CLI started in this process, as runCli, with `interrupt` delivering SIGINT as Ctrl-C
 * would: for tests of what a run does when interrupted (a process of its own only where SIGKILL is).
 * `options.stderr`: called with each text the command writes to stderr, as it writes it (a test that
 * acts once the run says something: it waits for a lock, it took one over).
 */
export async function startCliInProcess(
  args: string[],
  env: Record<string, string | undefined> = {},
  options: { stderr?: (text: string) => void } = {},
): Promise<{ interrupt: () => void; done: Promise<CliResult> }> {
  const [{ main }, { capturedIo }] = await builtCli();
  const io = capturedIo({ env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...env } });
  const told = options.stderr;
  if (told) {
    const write = io.stderr.write.bind(io.stderr);
    io.stderr.write = (text: string) => {
      const written = write(text);
      told(text);
      return written;
    };
  }
  const done = main(args, io).then((code) => ({ code, signal: null, stdout: io.stdout.text, stderr: io.stderr.text }));
  // A second Ctrl-C halts and exits at once: in this process its exit is thrown at the sender, while main ends with its code.
  const interrupt = () => {
    try {
      io.signals.emit('SIGINT', 'SIGINT');
    } catch (error) {
      if ((error as Error).constructor.name !== 'ExitNow') throw error;
    }
  };
  return { interrupt, done };
}

/** What `sitefleet sim --json` says on its first line. */
export interface SimStartLine {
  base_url: string;
  token: string;
  company_id: string;
  environments: number;
  site_url: string;
}

/**
 * `sitefleet sim ARGS --json` in this process: its start line, and `stop`, which delivers SIGTERM as
 * Ctrl-C would and gives the exit code. For tests of the command's flags, not of the process boundary.
 */
export async function serveSimCli(args: string[]): Promise<{ info: SimStartLine; stop: () => Promise<number> }> {
  const [{ main }, { capturedIo }] = await builtCli();
  const io = capturedIo({ env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1' } });
  let announced!: (line: string) => void;
  const started = new Promise<string>((resolve) => (announced = resolve));
  const write = io.stdout.write.bind(io.stdout);
  io.stdout.write = (text: string) => {
    const written = write(text);
    if (io.stdout.text.includes('\n')) announced(io.stdout.text.split('\n')[0]!);
    return written;
  };
  const exited = main(['sim', ...args, '--json'], io);
  const ended = exited.then((code): never => {
    throw new Error(`sitefleet sim exited (${code}) before its start line: ${io.stderr.text}`);
  });
  const line = await Promise.race([started, ended]);
  return {
    info: JSON.parse(line) as SimStartLine,
    stop: () => {
      io.signals.emit('SIGTERM', 'SIGTERM');
      return exited;
    },
  };
}

/** Runs the built CLI in a process of its own (see startCli). */
export function runCliProcess(
  args: string[],
  env: Record<string, string | undefined> = {},
  options: { timeoutMs?: number; input?: string } = {},
): Promise<CliResult> {
  return startCli(args, env, options).done;
}

/** The environment the CLI needs to talk to a simulator. */
export function simEnv(sim: Simulator): Record<string, string> {
  return { SITEFLEET_BASE_URL: sim.baseUrl, SITEFLEET_TOKEN: sim.token, SITEFLEET_COMPANY: sim.companyId, SITEFLEET_STATE_DIR: tempDir() };
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'sitefleet-test-'));
}

/** Writes a playbook into a fresh temp folder and returns its path. */
export function writePlaybook(text: string, dir = tempDir(), name = 'playbook.yaml'): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}
