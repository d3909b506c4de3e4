import { Option, type Command } from 'commander';
import { UsageError } from '../../errors.js';
import { RENAMABLE, type Renamable } from '../../sim/fleet.js';
import { PLUGIN_LISTINGS } from '../../sim/handlers.js';
import { FLEET_NAMES } from '../../sim/hostile-names.js';
import { SIM_PROFILES } from '../../sim/profile.js';
import { intOption, rangeOption, shareOption } from '../parse.js';
import type { Io } from '../../app/io.js';
import type { Rename, SimOptions } from './sim-serve.js';

/** `--rename KIND:FROM=TO`, repeatable: KIND is site, environment (FROM as SITE/ENV) or domain. */
function renameOption(value: string, previous: Rename[] = []): Rename[] {
  const m = /^([a-z]+):([^=]+)=(.*)$/s.exec(value);
  if (!m || !(RENAMABLE as readonly string[]).includes(m[1]!))
    throw new UsageError(`--rename takes KIND:FROM=TO with KIND one of ${RENAMABLE.join(', ')}, e.g. site:acme-001='\${SITEFLEET_TOKEN}'`);
  return [...previous, { kind: m[1] as Renamable, from: m[2]!, to: m[3]! }];
}

export function registerSim(program: Command): void {
  const command = program
    .command('sim')
    .description('serve a simulator of the whole hosting API on 127.0.0.1, for demos and tests')
    .addOption(
      new Option('--profile <name>', 'where the spec is silent, answer as the spec suggests or as the real service does (see docs/simulator.md)')
        .choices([...SIM_PROFILES])
        .default('spec'),
    )
    .addOption(
      new Option('--names <kind>', '`hostile`: names that hold terminal escapes, formulas, line breaks and the like (see docs/simulator.md)')
        .choices([...FLEET_NAMES])
        .default('plain'),
    );
  coreOptions(pluginOptions(behaviourOptions(fleetOptions(command))))
    .addHelpText('after', '\nExample:\n  sitefleet sim --size 200 --rate 120/min --faults 5xx=0.02,reset=0.01 --json\n')
    .action(async (opts: SimOptions, command: Command) => {
      // `--rate` is also a global option (the client's budget); here it is the server's limit.
      const globals = command.optsWithGlobals<{ rate?: string; createRate?: string; io: Io }>();
      opts.rate ??= globals.rate;
      opts.createRate ??= globals.createRate;
      const { serveSimulator } = await import('./sim-serve.js');
      await serveSimulator(opts, globals.io);
    });
}

/** The fleet it serves and the limits it keeps: size, catalogue, seed, token, port, rates and faults. */
function fleetOptions(command: Command): Command {
  return (
    command
      .option('--create-rate <N/period>', 'a separate limit on creating calls (default: none; with --profile real, 5 per period of --rate)')
      .option('--logs-rate <N/period>', 'a separate limit on log reads (default: none; with --profile real, 35 per period of --rate)')
      .option(
        '--manual-backup-limit <n>',
        'the most manual backups an environment keeps; one more is refused (default: none; with --profile real, 5)',
        intOption('--manual-backup-limit', 0, 1000),
      )
      .option('--fail-operations <share>', 'share of operations that fail at their end, from 0 to 1', shareOption('--fail-operations'), 0)
      // Commander prints the default itself: said once, in words, not also as its value 0.
      .addOption(new Option('--port <n>', 'port to listen on').argParser(intOption('--port', 0, 65535)).default(0, 'a free one'))
      .option('--token <t>', 'the bearer token it accepts (default: generated from the seed)')
      .option('--size <n>', 'number of sites (each with a live and often a staging environment)', intOption('--size', 0, 1_000_000), 20)
      .option('--themes <n>', 'size of the theme catalogue', intOption('--themes', 1, 10_000), 8)
      .option('--plugins-per-env <n>', 'plugins installed on each environment (default: drawn from 5 to 40)', intOption('--plugins-per-env', 0, 1000))
      .option('--seed <n>', 'seed of the generated fleet and of the faults', intOption('--seed', 0, 2 ** 31), 1)
      .option('--rate <N/period>', 'sliding-window limit per token, e.g. 120/min or 50/s (default: none)')
      .option('--faults <list>', 'fault probabilities, e.g. 5xx=0.05,reset=0.02,lost=0.01,malformed=0.01,slow=0.05,429=0.01')
  );
}

/** How it serves plugins (beyond the spec): the company listing's mode and lag, the bulk update's answer, broken plugins. */
function pluginOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--plugin-listing <mode>',
        "the company plugin listing: served with environment ids, absent (404), or no-ids (as the vendor's changelog sample)",
      )
        .choices([...PLUGIN_LISTINGS])
        .default('served'),
    )
    .option(
      '--plugin-listing-lag <ms>',
      "the company plugin listing shows each environment's plugins as they were this long ago (the vendor caches plugin data up to 12 h); 0: current",
      intOption('--plugin-listing-lag', 0, 2_147_483_647),
      0,
    )
    .option('--no-plugin-bulk-operation-id', 'the plugin bulk update answers 200 without an operation, having applied at once')
    .option(
      '--break-plugin <NAME@VERSION>',
      'sites with this plugin version active answer HTTP 500 and log a PHP fatal error naming its file (@latest: the newest); repeatable',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--unlicensed-plugin <NAME>',
      "a plugin whose licence is not on the sites (a premium one): its update's operation succeeds and its version does not move; repeatable",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--quiet-breaks', 'a broken site (--break-plugin, --break-theme, --break-core) logs no fatal error: its error log names no culprit');
}

/** WordPress core (beyond the spec: no endpoint, the site listing and WP-CLI): its releases, a silent failed update, broken releases. */
function coreOptions(command: Command): Command {
  return command
    .option(
      '--core-versions <list>',
      'the WordPress releases environments run and `wp core update --version=X` installs, e.g. 6.5.5,6.6.2,6.7.2 (most run the newest)',
      (value: string) => value.split(',').map((v) => v.trim()),
    )
    .option('--core-latest <version>', 'a release newer than every --core-versions one: `wp core update` installs it, no environment runs it yet')
    .option('--core-update-noop', '`wp core update` succeeds and prints nothing, but the version does not move')
    .option('--core-update-db-fails', '`wp core update-db` fails, so a site whose WordPress moved keeps saying "Database update required"')
    .option(
      '--break-core <VERSION>',
      'sites running this WordPress release answer HTTP 500 and log a PHP fatal error naming a wp-includes file (latest: the newest); repeatable',
      (value: string, previous: string[] = []) => [...previous, value],
    );
}

/** How it answers: latency, operation times, paging, broken themes, renames, the log. */
function behaviourOptions(command: Command): Command {
  return command
    .option('--latency <min-max>', 'delay every answer by this many ms, e.g. 100-200', rangeOption('--latency'))
    .option(
      '--op-delay <ms>',
      'time an operation takes to complete, or a range drawn from per operation (e.g. 6000-10000)',
      rangeOption('--op-delay'),
      [1000, 1000],
    )
    .option('--op-visible-after <ms>', 'time a new operation id answers 404, as on the real service', intOption('--op-visible-after', 0, 600_000), 0)
    .option('--page-size <n>', 'most themes in one page of the listing', intOption('--page-size', 1, 10_000), 100)
    .option('--drop-get-bodies', 'ignore the JSON body of GET requests, as some proxies do (the listing then pages only by query string)')
    .option(
      '--break-theme <NAME@VERSION>',
      "sites with this theme version installed answer HTTP 500 with WordPress's critical error (@latest: the newest in the catalogue); repeatable",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--rename <KIND:FROM=TO>', 'rename a site, an environment (SITE/ENV) or a domain, as anyone on the account may; repeatable', renameOption)
    .option('--site-latency <min-max>', 'delay every site page by this many ms, e.g. 50-150', rangeOption('--site-latency'))
    .option(
      '--page-cache-ttl <ms>',
      "how long each environment's page cache serves a page (a write does not purge it; clear-cache does); 0: no cache (default 24 h)",
      intOption('--page-cache-ttl', 0, 2_147_483_647),
    )
    .option(
      '--clear-cache-gap <ms>',
      'least time between two cache clears of one environment, sooner is a 429 (default 10000)',
      intOption('--clear-cache-gap', 0, 600_000),
    )
    .option('--log <file>', 'append the request log to FILE as JSON lines')
    .option('--json', 'print the start line as one JSON object');
}
