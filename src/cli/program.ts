import { Command, Option } from 'commander';
import { UsageError } from '../errors.js';
import { reportError } from './report-error.js';
import { durationOption, intOption } from './parse.js';
import { LONGEST } from '../util/duration.js';
import type { GlobalOptions } from '../app/runtime.js';
import { checkCommandOutputs } from '../app/output-check.js';
import { sitefleetVersion } from '../util/version.js';
import { ExitNow, type Io } from '../app/io.js';
import { flushLogs } from '../app/log-files.js';

/** Options that default to an environment variable: read from the io's environment, not the process's. */
const FROM_ENV = {
  baseUrl: 'SITEFLEET_BASE_URL',
  company: 'SITEFLEET_COMPANY',
  sites: 'SITEFLEET_SITES',
  stateDir: 'SITEFLEET_STATE_DIR',
  coordination: 'SITEFLEET_COORDINATION',
} as const satisfies Partial<Record<keyof GlobalOptions, string>>;

/** A flag's value, else its variable's (a flag beats the environment, as commander's own `.env()` does). */
function applyEnvironment(program: Command, env: Io['env']): void {
  for (const [key, name] of Object.entries(FROM_ENV)) {
    if (program.getOptionValue(key) === undefined && env[name] !== undefined) program.setOptionValueWithSource(key, env[name], 'env');
  }
}

/**
 * Builds the program with every command, or with `args` only the command they call when that is plain
 * (commandCalled): a command's module, and what it loads to declare its flags, loads only when it is the
 * one called, so `validate` pays for no simulator, output or run code at start-up.
 */
export async function buildProgram(io: Io, args?: readonly string[]): Promise<Command> {
  const program = outputOptions(
    serviceOptions(
      new Command('sitefleet')
        .description('Fleet-wide maintenance for WordPress hosting environments: YAML playbooks, validated, planned, rate-limited, reported.')
        .version(sitefleetVersion()),
    ),
  )
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: (text) => void io.stdout.write(text), writeErr: (text) => void io.stderr.write(text) })
    .exitOverride();
  // Not a flag: what every command reads its environment from and prints to (app/io.ts).
  program.setOptionValue('io', io);
  const called = args && commandCalled(program, args);
  for (const name of called ? [called] : Object.keys(COMMANDS)) (await COMMANDS[name]!())(program);
  for (const command of program.commands) command.exitOverride();
  // `--log-file`, whatever the command: never a link, a file that is not a log, nor --sites or --token-file.
  program.hook('preAction', async (_program, action) => {
    applyEnvironment(program, io.env);
    checkCommandOutputs(action.optsWithGlobals<GlobalOptions>(), [], []);
    // The view renders plans and reports (cli/render.ts, and all it reads): loaded once a command is about to act.
    const { terminalView } = await import('./terminal-view.js');
    program.setOptionValue(
      'view',
      terminalView(io, () => program.opts<{ quiet?: boolean }>().quiet === true),
    );
  });
  return program;
}

/** Where the service is and how it is spoken to: base URL, token, company, sites, concurrency, rates. */
function serviceOptions(program: Command): Command {
  return program
    .addOption(new Option('--base-url <url>', 'the API base URL; /v2 is appended (env: SITEFLEET_BASE_URL)'))
    .option('--token-file <file>', 'read the API token from FILE (else SITEFLEET_TOKEN; never a flag value)')
    .addOption(new Option('--company <uuid>', 'company id; overrides the playbook (env: SITEFLEET_COMPANY)'))
    .addOption(new Option('--sites <file>', 'site name → site id, as YAML or CSV (the listing has no site ids) (env: SITEFLEET_SITES)'))
    .option('--concurrency <n>', 'calls in flight at once (default: playbook, else 8)', intOption('--concurrency', 1, 256))
    .option('--rate <N/period>', 'API budget shared by every call, e.g. 120/min or 2/s (default: playbook, else 120/min)')
    .option(
      '--create-rate <N/period>',
      "the service's limit on creating calls (backups, sites, environments, domains, DNS records), e.g. 5/min (default: playbook, else learned)",
    )
    .option(
      '--rate-limit-wait <duration>',
      `how long one call keeps trying while the service answers 429, e.g. 10m (default 10m, at most ${LONGEST.rateLimitWait})`,
      durationOption('--rate-limit-wait', LONGEST.rateLimitWait, '90s, 10m or 1h'),
    );
}

/** What a run logs and prints, which files it may name, where its state lives, and what it shares. */
function outputOptions(program: Command): Command {
  return program
    .addOption(
      new Option('--log-level <level>', 'pino log level (default: warn, or info with --log-file)').choices([
        'trace',
        'debug',
        'info',
        'warn',
        'error',
        'fatal',
        'silent',
      ]),
    )
    .option(
      '--allow-outside <file>',
      "a file outside the playbook's folder the playbook may name (e.g. ip_list_file); repeat for more",
      (file: string, files: string[] = []) => [...files, file],
    )
    .option(
      '--health-url <template>',
      "the page health: checks fetch instead of each task's health.url, e.g. 'http://127.0.0.1:8080/sites/{{domain}}/' for the simulator's sites",
    )
    .option('--log-file <file>', 'write JSON log lines to FILE instead of stderr')
    .addOption(
      new Option('--log-format <format>', 'log lines on stderr: short text lines, or JSON lines for a machine').choices(['text', 'json']).default('text'),
    )
    .option('-q, --quiet', 'print nothing but errors')
    .addOption(new Option('--state-dir <dir>', 'where run locks live (default: ~/.cache/sitefleet) (env: SITEFLEET_STATE_DIR)'))
    .addOption(
      new Option(
        '--coordination <url>',
        'share the run lock, the rate budget and busy environments with other machines through Redis: redis://host:port/db (env: SITEFLEET_COORDINATION)',
      ),
    )
    .addOption(
      new Option('--poll-interval <ms>', 'first wait between operation polls (default 1000)').argParser(intOption('--poll-interval', 1, 600_000)).hideHelp(),
    );
}

type Register = (program: Command) => void;

/** Every command, in the order `--help` lists them, each a module of its own that loads when asked for. */
const COMMANDS: Record<string, () => Promise<Register>> = {
  validate: async () => (await import('./commands/validate.js')).registerValidate,
  plan: async () => (await import('./commands/plan.js')).registerPlan,
  run: async () => (await import('./commands/run.js')).registerRun,
  resume: async () => (await import('./commands/resume.js')).registerResume,
  status: async () => (await import('./commands/status.js')).registerStatus,
  restore: async () => (await import('./commands/restore.js')).registerRestore,
  report: async () => (await import('./commands/report.js')).registerReport,
  inventory: async () => (await import('./commands/inventory.js')).registerInventory,
  quarantine: async () => (await import('./commands/quarantine.js')).registerQuarantine,
  backups: async () => (await import('./commands/backups.js')).registerBackups,
  doctor: async () => (await import('./commands/doctor.js')).registerDoctor,
  'ssh-config': async () => (await import('./commands/ssh-config.js')).registerSshConfig,
  sim: async () => (await import('./commands/sim.js')).registerSim,
  demo: async () => (await import('./commands/demo.js')).registerDemo,
};

/**
 * The command `args` call, read as commander reads them: the first word that is no global option nor
 * its value. Undefined when that is not plain (help, `--`, an option the program does not know, a typo):
 * then every command is registered and commander answers as it always has.
 */
export function commandCalled(program: Command, args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('-')) return Object.hasOwn(COMMANDS, arg) ? arg : undefined;
    if (arg.startsWith('--') && arg.includes('=')) continue;
    const option = program.options.find((o) => o.long === arg || o.short === arg);
    if (!option || option.optional) return undefined;
    if (option.required) i++;
  }
  return undefined;
}

/**
 * `--token` is not an option (a token on the command line ends up in shell history and `ps`), but
 * people will try it: they get the way to pass one, and the value is never echoed. `sim --token` is
 * the simulator's own option (the token it accepts) and is left alone.
 */
export function refuseTokenFlag(args: readonly string[]): void {
  if (args.includes('sim')) return;
  if (args.some((a) => a === '--token' || a.startsWith('--token='))) {
    throw new UsageError('--token is not taken (a token on the command line ends up in shell history and ps): set SITEFLEET_TOKEN or pass --token-file FILE');
  }
}

/**
 * Runs one command line (the arguments after `sitefleet`) with `io` and returns its exit code; every
 * error ends as one line and its exit code. `bin` (main.ts) runs it with the process's io; tests run it in-process.
 */
export async function main(args: readonly string[], io: Io): Promise<number> {
  try {
    refuseTokenFlag(args);
    await (await buildProgram(io, args)).parseAsync([...args], { from: 'user' });
    return io.exitCode;
  } catch (error) {
    if (error instanceof ExitNow) return error.code;
    return reportError(error, io.stderr);
  } finally {
    flushLogs();
  }
}
