import { UsageError } from '../../errors.js';
import { parseFaults } from '../../sim/faults.js';
import { startSimulator, type Simulator } from '../../sim/server.js';
import { parseRate } from '../../util/rate.js';
import type { Io } from '../../app/io.js';
import type { Renamable } from '../../sim/fleet.js';
import type { PluginListing } from '../../sim/handlers.js';
import type { FleetNames } from '../../sim/hostile-names.js';
import type { SimProfile } from '../../sim/profile.js';

/** The options of `sitefleet sim`, as commander parsed them (sim.ts declares them). */
export interface SimOptions {
  profile: SimProfile;
  names: FleetNames;
  createRate?: string;
  logsRate?: string;
  manualBackupLimit?: number;
  failOperations: number;
  port: number;
  token?: string;
  size: number;
  themes: number;
  pluginsPerEnv?: number;
  pluginListing: PluginListing;
  pluginListingLag: number;
  pluginBulkOperationId: boolean;
  breakPlugin?: string[];
  unlicensedPlugin?: string[];
  quietBreaks?: boolean;
  coreVersions?: string[];
  coreLatest?: string;
  coreUpdateNoop?: boolean;
  coreUpdateDbFails?: boolean;
  breakCore?: string[];
  seed: number;
  rate?: string;
  faults?: string;
  latency?: [number, number];
  opDelay: [number, number];
  opVisibleAfter: number;
  pageSize: number;
  dropGetBodies?: boolean;
  log?: string;
  json?: boolean;
  breakTheme?: string[];
  siteLatency?: [number, number];
  pageCacheTtl?: number;
  clearCacheGap?: number;
  rename?: Rename[];
}

export interface Rename {
  kind: Renamable;
  from: string;
  to: string;
}

/** `sitefleet sim`: starts the simulator the options describe, says where it is, and serves until SIGINT or SIGTERM. */
export async function serveSimulator(opts: SimOptions, io: Io): Promise<void> {
  const sim = await startFromOptions(opts);
  try {
    for (const r of opts.rename ?? []) sim.rename(r.kind, r.from, r.to);
  } catch (error) {
    await sim.stop();
    throw new UsageError(`--rename: ${(error as Error).message}`);
  }
  io.stdout.write(announcement(sim, opts.json === true));
  await untilStopped(io);
  await sim.stop();
}

/** The simulator of the options, each checked first (a bad rate or fault list is exit 2 before anything listens). */
function startFromOptions(opts: SimOptions): Promise<Simulator> {
  const flags: [string, string | undefined, (text: string) => unknown][] = [
    ['--rate', opts.rate, parseRate],
    ['--create-rate', opts.createRate, parseRate],
    ['--logs-rate', opts.logsRate, parseRate],
    ['--faults', opts.faults, parseFaults],
  ];
  for (const [flag, value, parse] of flags) {
    try {
      if (value !== undefined) parse(value);
    } catch (error) {
      throw new UsageError(`${flag} ${value}: ${(error as Error).message}`);
    }
  }
  return startSimulator({
    profile: opts.profile,
    names: opts.names,
    createRate: opts.createRate,
    logsRate: opts.logsRate,
    manualBackupLimit: opts.manualBackupLimit,
    failOperations: opts.failOperations,
    port: opts.port,
    token: opts.token,
    sites: opts.size,
    themes: opts.themes,
    pluginsPerEnv: opts.pluginsPerEnv,
    pluginListing: opts.pluginListing,
    pluginListingLagMs: opts.pluginListingLag,
    pluginBulkOperationId: opts.pluginBulkOperationId,
    breakPlugins: opts.breakPlugin,
    unlicensedPlugins: opts.unlicensedPlugin,
    quietBreaks: opts.quietBreaks === true,
    coreVersions: opts.coreVersions,
    coreLatest: opts.coreLatest,
    coreUpdateNoop: opts.coreUpdateNoop === true,
    coreUpdateDbFails: opts.coreUpdateDbFails === true,
    breakCore: opts.breakCore,
    seed: opts.seed,
    rate: opts.rate,
    faults: opts.faults,
    latencyMs: opts.latency,
    operationDelayMs: opts.opDelay,
    operationVisibleAfterMs: opts.opVisibleAfter,
    maxPageSize: opts.pageSize,
    dropGetBodies: opts.dropGetBodies === true,
    logFile: opts.log,
    keepLog: false,
    breakThemes: opts.breakTheme,
    siteLatencyMs: opts.siteLatency,
    pageCacheTtlMs: opts.pageCacheTtl,
    clearCacheGapMs: opts.clearCacheGap,
  });
}

/** Where it serves and the variables that point sitefleet at it, as text or one JSON object. */
function announcement(sim: Simulator, json: boolean): string {
  const info = { base_url: sim.baseUrl, token: sim.token, company_id: sim.companyId, environments: sim.fleet.environments.size, site_url: sim.siteUrl };
  if (json) return `${JSON.stringify(info)}\n`;
  return (
    `simulator serving ${info.environments} environments at ${info.base_url}/v2\n` +
    `  export SITEFLEET_BASE_URL=${info.base_url}\n  export SITEFLEET_TOKEN=${info.token}\n  export SITEFLEET_COMPANY=${info.company_id}\n` +
    // The fleet's site pages, for health checks (docs/simulator.md): the template --health-url takes.
    `health checks: --health-url '${info.site_url}'\n` +
    'stop it with Ctrl-C\n'
  );
}

function untilStopped(io: Io): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      io.signals.off('SIGINT', stop);
      io.signals.off('SIGTERM', stop);
      resolve();
    };
    io.signals.on('SIGINT', stop);
    io.signals.on('SIGTERM', stop);
  });
}
