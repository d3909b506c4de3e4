import { createWriteStream, type WriteStream } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_OPERATION_PATH, ENDPOINTS, laneOf, type Endpoint, type EndpointName } from '../api/endpoints.js';
import { bodyProblems } from '../api/request-schemas.js';
import { FaultPlan, parseFaults, type FaultKind, type FaultRates } from './faults.js';
import { captureGenerated } from './backup-state.js';
import { coreReleases, parseCoreBreak } from './core.js';
import { generateFleet, rename, type Fleet, type Renamable } from './fleet.js';
import type { FleetNames } from './hostile-names.js';
import { HANDLERS, SimHttpError, type PluginListing } from './handlers.js';
import { ListingLag } from './listing-lag.js';
import { Shops } from './shop.js';
import { SiteLogs } from './site-logs.js';
import { Operations, type OperationDelay } from './operations.js';
import { acceptedAnswer, operationAnswer, operationId, profileDefaults, syncAnswer, unauthenticatedMessage, type SimProfile } from './profile.js';
import { Random } from './random.js';
import { parseRate, SlidingWindow } from './rate-window.js';
import { PageCache } from './page-cache.js';
import { DomainIndex, parseItemBreak, parseThemeBreak, sitePage, type SiteBreaks, type SiteLogEntry } from './sites.js';
import type { SiteLook } from './site-look.js';

export interface SimulatorOptions {
  /** Where the spec is silent: answer as the spec suggests (default), or as the real service does (see profile.ts). */
  profile?: SimProfile;
  /**
   * A separate sliding-window limit on creating calls (sites, environments, backups, domains, DNS
   * records), beside `rate`. The `real` profile has one by default: 5 per period of `rate` (5 a minute).
   */
  createRate?: string | { limit: number; periodMs: number };
  /**
   * The logs endpoint's own sliding-window limit, beside `rate` (a log read counts in both). The `real`
   * profile has one by default: 35 per period of `rate` (35 a minute), as public clients say.
   */
  logsRate?: string | { limit: number; periodMs: number };
  /** Share of operations that fail at their end (default 0). */
  failOperations?: number;
  /** 0 (default) picks a free port. The simulator only ever binds 127.0.0.1. */
  port?: number;
  /** The bearer token it accepts; generated from the seed when absent. */
  token?: string;
  sites?: number;
  themes?: number;
  /** Plugins installed on each environment (default: drawn from 5 to 40 an environment). */
  pluginsPerEnv?: number;
  /**
   * The company plugin listing (beyond the spec): `served` (default) with each environment's id,
   * `absent` (404, as a service that does not know it), `no-ids` (entries without the id, as the
   * vendor's changelog sample). See profile.ts for what the `real` profile does.
   */
  pluginListing?: PluginListing;
  /**
   * The company plugin listing shows each environment's plugins as they were this long ago, on the
   * simulator's clock (`now`): the vendor's cache of plugin data. The environment's listing is always
   * current. @default 0
   */
  pluginListingLagMs?: number;
  /** False: the plugin bulk update answers 200 without an operation, having applied at once. @default true */
  pluginBulkOperationId?: boolean;
  /**
   * The WordPress releases environments run and `wp core update --version=X` installs, in any order
   * (default 6.3.1, 6.4.3, 6.5.5, 6.6.2, 6.7.1, 6.7.2): about 56% of environments run the newest, 25% the
   * one before, the rest older ones. Drawn from each environment's id, not the seed's stream.
   */
  coreVersions?: string[];
  /** A release newer than every one of `coreVersions`, which `wp core update` installs but no environment runs yet (e.g. `7.0.0`). */
  coreLatest?: string;
  /** True: `wp core update` succeeds, prints nothing, and the version does not move (the update that failed silently). @default false */
  coreUpdateNoop?: boolean;
  /** True: `wp core update-db` fails (WP-CLI's error), so the site keeps saying "Database update required". @default false */
  coreUpdateDbFails?: boolean;
  /** Sites running one of these WordPress releases (`latest`: the newest) answer HTTP 500, and log PHP's fatal error naming a wp-includes file. */
  breakCore?: string[];
  seed?: number;
  /** `hostile`: sites, staging environments, backups, a key and SSH answers named from the hostile corpus. */
  names?: FleetNames;
  /** A sliding-window limit per token, e.g. `120/min` or `{limit: 50, periodMs: 1000}`. None by default. */
  rate?: string | { limit: number; periodMs: number };
  /** e.g. `500=0.05,reset=0.02`; see faults.ts. */
  faults?: string | FaultRates;
  /** Every answer is delayed by a latency drawn from this range, in ms. */
  latencyMs?: [number, number];
  /**
   * The unit a 429's Retry-After counts in, in ms (default 1000: whole seconds, as HTTP says). A test
   * sets a small one (50: `Retry-After: 0.05`, which the client reads) so that each provoked 429
   * pauses the budget for that long, not a whole second.
   */
  retryAfterUnitMs?: number;
  /** False: the site listing (`GET /sites`, beyond the spec) answers 404, as a service that does not serve it. @default true */
  siteListing?: boolean;
  /** Extra delay of a `slow` fault (default 2000 ms). */
  slowMs?: number;
  /** How long an operation runs before it completes (default 1000 ms); `[min, max]` draws each from a range. */
  operationDelayMs?: OperationDelay;
  /** How long a new operation id answers 404 (default 0; 2000 ms with the `real` profile), as the real service does. */
  operationVisibleAfterMs?: number;
  /**
   * Each operation's first `hidden` polls answer 404, and the `running` polls after them 202 (in
   * progress), whenever they come: "not visible yet" and "still running" as events, for tests that
   * must see them however slowly the machine runs (default none: time alone decides).
   */
  operationPolls?: { hidden?: number; running?: number };
  /** The simulator's time, in ms (default the wall clock): a test moves it instead of waiting for it. */
  now?: () => number;
  /** The most themes one page of the theme listing holds (default 100). */
  maxPageSize?: number;
  /** Ignore the JSON body of GET requests, as some proxies do (paging then only works through the query string). */
  dropGetBodies?: boolean;
  /** Appends the request log to this file as JSON lines. */
  logFile?: string;
  /** Keep the request log in memory (default true). */
  keepLog?: boolean;
  /** Sites with a theme installed at one of these versions (`NAME@VERSION`, or `NAME@latest`) answer HTTP 500 with WordPress's critical error. */
  breakThemes?: string[];
  /**
   * Sites with one of these plugin versions (`NAME@VERSION`, `NAME@latest`) installed and active
   * answer HTTP 500, and log PHP's fatal error naming the plugin's file.
   */
  breakPlugins?: string[];
  /**
   * Plugins whose licence is not on the sites (a premium plugin, or one with an update server of its
   * own): a bulk or pinned update of one succeeds and its version does not move, as the real service
   * does (real-service-notes.md, "After an update"). None by default.
   */
  unlicensedPlugins?: string[];
  /** A broken site logs no fatal error (a breakage its error log does not name: logging off, a white screen from elsewhere). */
  quietBreaks?: boolean;
  /** Domain names whose site answers broken whatever it runs. */
  brokenDomains?: string[];
  /** Every site page is delayed by a latency drawn from this range, in ms (default none). */
  siteLatencyMs?: [number, number];
  /**
   * How long each environment's page cache serves a page (page-cache.ts), on the simulator's clock:
   * a write does not purge it, `POST /sites/tools/clear-cache` does. 0: no cache. @default 24 hours
   */
  pageCacheTtlMs?: number;
  /** The least time between two manual cache clears of one environment (answered 429 sooner). @default 10000 */
  clearCacheGapMs?: number;
  /**
   * The most manual backups one environment keeps: creating one more is refused (400), and nothing is
   * removed for you. 0 means none. @default none; 5 with the `real` profile
   */
  manualBackupLimit?: number;
  /** Endpoints this service does not have: answered 404 "No route", as a host or plan without that tool answers. */
  missingEndpoints?: EndpointName[];
  /** Shops (shop.ts): domain → orders each page served places on its environment. None by default. */
  shops?: Record<string, number>;
}

export interface SimLogEntry {
  seq: number;
  /** ms since the simulator started, when the request arrived */
  at: number;
  method: string;
  path: string;
  endpoint?: EndpointName | 'getOperation';
  /** 0 when the connection was dropped without an answer */
  status: number;
  operation_id?: string;
  /** ms since the simulator started, when the answer was sent (or the connection dropped) */
  answered_at?: number;
  /** whether the request changed (or, for an accepted operation, will change) the fleet */
  changed: boolean;
  fault?: FaultKind;
  body?: unknown;
}

export interface Simulator {
  /** `http://127.0.0.1:PORT`: what the client takes as `{base_url}`. */
  baseUrl: string;
  token: string;
  companyId: string;
  fleet: Fleet;
  operations: Operations;
  log: SimLogEntry[];
  /** The sites' front pages, `{{domain}}` to fill: what a playbook's `health.url` points at. */
  siteUrl: string;
  /** Requests to the sites (never in `log`, which is the API's). */
  siteLog: SiteLogEntry[];
  /** From now on the site at this domain answers broken (or healthy again with `false`). */
  breakSite(domain: string, broken?: boolean): void;
  /** From now on sites with this theme version (`NAME@VERSION`, `NAME@latest`) answer broken; returns it resolved. */
  breakTheme(theme: string): string;
  /** From now on sites with this plugin version active answer broken, with a fatal error in their error log; returns it resolved. */
  breakPlugin(plugin: string): string;
  /** From now on sites running this WordPress release (`latest`: the newest) answer broken, with a fatal error in their error log; returns it resolved. */
  breakCore(version: string): string;
  /** From now on this plugin's updates succeed without moving its version (its licence is not on the sites; a test that shaped the catalogue names its own). */
  unlicensePlugin(name: string): void;
  /** From now on the site at this domain is a shop: each page served places `perVisit` orders on its environment (`orders`). */
  openShop(domain: string, perVisit?: number): void;
  /** From now on `wp core update` succeeds without moving the version (`true`), or moves it again (`false`). */
  setCoreUpdateNoop(noop: boolean): void;
  /** Each environment's logs (error, access, kinsta-cache-perf), as `GET …/logs` reads them. */
  logs: SiteLogs;
  /** The company plugin listing's lag, when `pluginListingLagMs` set one (a test sees what it holds). */
  pluginListingLag?: ListingLag;
  /** From now on sites with this theme version look so (a notice bar, or no style at all) and answer 200; returns it resolved. */
  lookTheme(theme: string, look: SiteLook): string;
  /** From now on the site at this domain has a carousel that shows the next slide at each load. */
  addCarousel(domain: string): void;
  /** From now on the site at this domain has a wide slider (the whole hero, the next colour at each load): more noise than hold_over. */
  addSlider(domain: string): void;
  /** Renames a site, an environment (`SITE/ENV`) or a domain, as anyone on the account may; returns its id. */
  rename(kind: Renamable, from: string, to: string): string;
  /** Changes the fault mix; `writesOnly` spares GETs (a test then reads the fleet cleanly); `only` limits it to these endpoints. */
  setFaults(faults: string | FaultRates, options?: { writesOnly?: boolean; only?: EndpointName[] }): void;
  setRate(rate: string | { limit: number; periodMs: number } | undefined): void;
  /** Accept another token from now on (the old one then answers 401, as a revoked key does). */
  setToken(token: string): void;
  stop(): Promise<void>;
}

const SECRET_FIELDS = new Set(['admin_password', 'custom_ssl_key']);
const TOO_MANY = 'Too many requests, please try again later.';

interface Route {
  name: EndpointName | 'getOperation';
  method: string;
  pattern: RegExp;
  params: string[];
}

function compileRoutes(): Route[] {
  const entries: [EndpointName | 'getOperation', string, string][] = Object.entries(ENDPOINTS).map(([name, e]) => [name as EndpointName, e.method, e.path]);
  entries.push(['getOperation', 'GET', DEFAULT_OPERATION_PATH]);
  return entries.map(([name, method, path]) => {
    const params: string[] = [];
    const source = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{([a-z_]+)\\?\}/g, (_, p: string) => {
      params.push(p);
      return '([^/]+)';
    });
    return { name, method, pattern: new RegExp(`^${source}$`), params };
  });
}

function redact(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, SECRET_FIELDS.has(k) ? '[redacted]' : v]));
}

/**
 * What a GET's parameters are: its JSON body (unless a proxy dropped it), with query-string
 * parameters filling in what the body does not say. Whole numbers in the query are numbers.
 */
function getBodyAndQuery(body: unknown, query: URLSearchParams, dropBody: boolean): unknown {
  const merged: Record<string, unknown> = dropBody || typeof body !== 'object' || body === null ? {} : { ...(body as Record<string, unknown>) };
  for (const [key, value] of query) if (!(key in merged)) merged[key] = /^\d+$/.test(value) ? Number(value) : value;
  return merged;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 10 * 1024 * 1024) throw new SimHttpError(413, 'Request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The plugins named unlicensed, each one the catalogue has (a name it does not is a mistake, said at once). */
function unlicensedOf(fleet: Fleet, names: readonly string[] = []): Set<string> {
  for (const name of names) if (!fleet.pluginCatalog.has(name)) throw new Error(`unlicensed plugin ${JSON.stringify(name)} is not in the plugin catalogue`);
  return new Set(names);
}

/** Starts the simulator of the whole hosting API on 127.0.0.1. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const seed = options.seed ?? 1;
  const fleet = generateFleet({
    seed,
    sites: options.sites ?? 20,
    themes: options.themes ?? 8,
    pluginsPerEnv: options.pluginsPerEnv,
    names: options.names,
    core: coreReleases(options.coreVersions, options.coreLatest),
  });
  captureGenerated(fleet);
  const rng = new Random(seed * 7919 + 1);
  let token = options.token ?? `sim-${rng.uuid().replace(/-/g, '')}`;
  const started = performance.now();
  const clock = options.now ?? (() => Date.now());
  const profile = options.profile ?? 'spec';
  const siteListing = options.siteListing ?? true;
  const operations = new Operations(
    fleet,
    options.operationDelayMs ?? 1000,
    clock,
    new Random(seed * 104_729 + 3),
    options.failOperations ?? 0,
    new Random(seed * 15_485_863 + 5),
  );
  const faults = new FaultPlan(typeof options.faults === 'string' ? parseFaults(options.faults) : (options.faults ?? {}), seed);
  const toRate = (rate: NonNullable<SimulatorOptions['rate']>) => (typeof rate === 'string' ? parseRate(rate) : rate);
  const toWindow = (rate: SimulatorOptions['rate']) => {
    if (rate === undefined) return undefined;
    const r = toRate(rate);
    return new SlidingWindow(r.limit, r.periodMs);
  };
  let window = toWindow(options.rate);
  const habits = profileDefaults(profile, options.rate === undefined ? undefined : toRate(options.rate));
  const createWindow = toWindow(options.createRate ?? habits.createRate);
  const logsWindow = toWindow(options.logsRate ?? habits.logsRate);
  const routes = compileRoutes();
  const log: SimLogEntry[] = [];
  const keepLog = options.keepLog ?? true;
  const logStream: WriteStream | undefined = options.logFile ? createWriteStream(options.logFile, { flags: 'a' }) : undefined;
  const visibleAfter = options.operationVisibleAfterMs ?? habits.visibleAfterMs;
  const pollsOf = new Map<string, number>();
  const dropGetBodies = options.dropGetBodies ?? false;
  const unitMs = options.retryAfterUnitMs ?? 1000;
  /** Retry-After for a wait of `waitMs`: whole units, at least one, in seconds. */
  const retryAfter = (waitMs: number) => ({ 'retry-after': String((Math.max(1, Math.ceil(waitMs / unitMs)) * unitMs) / 1000) });
  let seq = 0;
  let faultsWritesOnly = false;
  let faultsOnly: ReadonlySet<string> | undefined;
  const breaks: SiteBreaks = {
    themes: new Set((options.breakThemes ?? []).map((b) => parseThemeBreak(fleet, b))),
    plugins: new Set((options.breakPlugins ?? []).map((b) => parseItemBreak(fleet, 'plugin', b))),
    core: new Set((options.breakCore ?? []).map((v) => parseCoreBreak(fleet.core, v))),
    domains: new Set((options.brokenDomains ?? []).map((d) => d.toLowerCase())),
    looks: new Map(),
    carousels: new Map(),
    sliders: new Map(),
  };
  const domainIndex = new DomainIndex(fleet);
  const siteLog: SiteLogEntry[] = [];
  const siteRng = new Random(seed * 31_337 + 11);
  const pages = new PageCache(clock, options.pageCacheTtlMs, options.clearCacheGapMs);
  const logs = new SiteLogs(clock);
  const shops = new Shops();
  for (const [domain, perVisit] of Object.entries(options.shops ?? {})) shops.open(domain, perVisit);
  const plugins = {
    listing: options.pluginListing ?? 'served',
    bulkOperationId: options.pluginBulkOperationId ?? true,
    lag: options.pluginListingLagMs ? new ListingLag(options.pluginListingLagMs, clock) : undefined,
    unlicensed: unlicensedOf(fleet, options.unlicensedPlugins),
  };
  const core = { updateNoop: options.coreUpdateNoop ?? false, updateDbFails: options.coreUpdateDbFails ?? false };
  const backupLimit = options.manualBackupLimit ?? habits.manualBackupLimit;
  const manualBackupLimit = backupLimit ? backupLimit : undefined;

  /** A site's page: public (no token), outside the API's windows and faults, logged apart. */
  async function serveSite(res: ServerResponse, path: string, at: number): Promise<void> {
    const [, domain = '', rest] = /^\/sites\/([^/]+)(\/.*)?$/.exec(path) ?? [];
    const name = decodeURIComponent(domain);
    // WordPress's canonical redirect: the front page lives at the slash.
    const { status, html, cached, env, brokenBy } =
      rest === undefined ? { status: 301, html: '' } : sitePage(fleet, domainIndex, breaks, name, { pages, path: rest });
    if (env && brokenBy && options.quietBreaks !== true) logs.fatal(fleet, env, brokenBy);
    if (env) logs.access(env, rest!, status, Buffer.byteLength(html));
    shops.visit(name, env, status, Boolean(cached));
    siteLog.push({ at: Math.round(at * 1000) / 1000, domain: name, status, ...(cached ? { cached } : {}) });
    const [min, max] = options.siteLatencyMs ?? [0, 0];
    if (max > 0) await sleep(min + siteRng.next() * (max - min));
    const headers: Record<string, string> = { 'content-type': 'text/html; charset=UTF-8', 'content-length': String(Buffer.byteLength(html)) };
    if (status === 301) headers.location = `/sites/${domain}/`;
    res.writeHead(status, headers);
    res.end(html);
  }

  function record(entry: SimLogEntry): void {
    entry.answered_at = Math.round((performance.now() - started) * 1000) / 1000;
    if (keepLog) log.push(entry);
    logStream?.write(`${JSON.stringify(entry)}\n`);
  }

  function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = performance.now() - started;
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://sim');
    if (method === 'GET' && url.pathname.startsWith('/sites/')) return serveSite(res, url.pathname, at);
    const entry: SimLogEntry = { seq: ++seq, at: Math.round(at * 1000) / 1000, method, path: url.pathname, status: 0, changed: false };
    const answer = (status: number, body: unknown, headers?: Record<string, string>) => {
      entry.status = status;
      record(entry);
      send(res, status, body, headers);
    };
    const fail = (status: number, message: string, data: unknown = null, headers?: Record<string, string>) =>
      answer(status, { status, message, data }, headers);

    let rawBody: string;
    try {
      rawBody = await readBody(req);
    } catch (error) {
      if (error instanceof SimHttpError) return fail(error.status, error.message);
      return; // client went away
    }
    if (req.headers.authorization !== `Bearer ${token}`) return fail(401, unauthenticatedMessage(profile));
    const path = url.pathname.startsWith('/v2/') ? url.pathname.slice(3) : undefined;
    let route: Route | undefined;
    let match: RegExpExecArray | null = null;
    let pathKnown = false;
    for (const r of path === undefined ? [] : routes) {
      if (options.missingEndpoints?.includes(r.name as EndpointName)) continue;
      const m = r.pattern.exec(path!);
      if (!m) continue;
      pathKnown = true;
      if (r.method === method) {
        route = r;
        match = m;
        break;
      }
    }
    if (route) entry.endpoint = route.name;
    // A refused call counts in neither window; a call over the creation limit is refused even when the general window has room.
    const lane = route ? laneOf(route.name) : 'general';
    const windows = [window, lane === 'create' ? createWindow : lane === 'logs' ? logsWindow : undefined].filter((w) => w !== undefined);
    for (const w of windows) {
      const waitMs = w.wait(clock());
      if (waitMs > 0) return fail(429, TOO_MANY, null, retryAfter(waitMs));
    }
    for (const w of windows) w.take(clock());
    const spared = (method === 'GET' && faultsWritesOnly) || (faultsOnly !== undefined && !faultsOnly.has(route?.name ?? ''));
    const fault = spared ? undefined : faults.draw();
    if (fault) entry.fault = fault;
    if (fault === 'reset') {
      record(entry);
      req.socket.destroy();
      return;
    }
    if (fault === '500' || fault === '502' || fault === '503') return fail(Number(fault), 'Internal server error');
    if (fault === '429') return fail(429, TOO_MANY, null, retryAfter(0));

    if (path === undefined) return fail(404, `No route for ${method} ${url.pathname}`);
    if (!route || !match) return fail(pathKnown ? 405 : 404, pathKnown ? `Method ${method} not allowed on ${path}` : `No route for ${method} ${path}`);
    const params = Object.fromEntries(route.params.map((p, i) => [p, decodeURIComponent(match[i + 1]!)]));

    if (route.name === 'getOperation') {
      operations.settle();
      const op = operations.all.get(params.operation_id!);
      entry.operation_id = params.operation_id;
      const polled = op ? (pollsOf.get(op.id) ?? 0) : 0;
      if (op) pollsOf.set(op.id, polled + 1);
      const { hidden = 0, running = 0 } = options.operationPolls ?? {};
      if (!op || polled < hidden || clock() < op.createdAt + visibleAfter) return fail(404, `Operation ${params.operation_id} not found`);
      const told = operationAnswer(profile, polled < hidden + running ? { ...op, state: 'in_progress' } : op);
      return answer(told.status, told.body);
    }

    const endpoint = ENDPOINTS[route.name];
    let body: unknown;
    if ('body' in endpoint) {
      const hasBody = rawBody.length > 0;
      const isJson = /^application\/json\b/i.test(req.headers['content-type'] ?? '');
      if (hasBody && !isJson) return fail(415, 'Content-Type must be application/json');
      if (!hasBody && method !== 'GET') return fail(415, 'Content-Type must be application/json, with a JSON body');
      try {
        body = hasBody ? JSON.parse(rawBody) : {};
      } catch {
        return fail(400, 'Body is not valid JSON');
      }
      if (method === 'GET') body = getBodyAndQuery(body, url.searchParams, dropGetBodies);
      entry.body = redact(body);
      const problems = bodyProblems(endpoint.body, body);
      if (problems.length > 0)
        return fail(400, problems.map((p) => `${p.path.replace(/^body\.?/, '') || 'body'}: ${p.message}`).join('; '), { errors: problems });
    }

    operations.settle();
    let result;
    try {
      const query = Object.fromEntries(url.searchParams);
      result = HANDLERS[route.name]({
        fleet,
        rng,
        params,
        body,
        maxPageSize: options.maxPageSize ?? 100,
        now: clock(),
        profile,
        query,
        siteListing,
        pages,
        plugins,
        logs,
        core,
        manualBackupLimit,
      });
    } catch (error) {
      if (error instanceof SimHttpError)
        return fail(error.status, error.message, error.data, error.retryAfterMs === undefined ? undefined : retryAfter(error.retryAfterMs));
      throw error;
    }
    let status: number;
    let responseBody: unknown;
    if ('async' in result) {
      const kind = (endpoint as Endpoint).operation!;
      const { envId, apply, failsWith } = result.async;
      const op = operations.start(operationId(profile, route.name, kind, rng.uuid()), kind, envId, apply, failsWith);
      entry.operation_id = op.id;
      entry.changed = op.state !== 'failed' && op.failsWith === undefined;
      ({ status, body: responseBody } = acceptedAnswer(profile, route.name, kind, op.id));
    } else {
      status = result.status;
      responseBody = syncAnswer(profile, route.name, result.body);
      entry.changed = method !== 'GET' && route.name !== 'getLoginUrl';
    }

    const delay = faults.latency(options.latencyMs) + (fault === 'slow' ? (options.slowMs ?? 2000) : 0);
    if (delay > 0) await sleep(delay);
    if (fault === 'lost') {
      entry.status = status;
      record(entry);
      req.socket.destroy();
      return;
    }
    if (fault === 'malformed') {
      entry.status = status;
      record(entry);
      const text = JSON.stringify(responseBody);
      const cut = text.slice(0, Math.max(1, Math.floor(text.length / 2)));
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(cut) });
      res.end(cut);
      return;
    }
    answer(status, responseBody);
  }

  const server: Server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, { status: 500, message: `simulator bug: ${(error as Error).message}`, data: null });
    });
  });
  server.headersTimeout = 70_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    get token() {
      return token;
    },
    companyId: fleet.companyId,
    fleet,
    operations,
    log,
    siteUrl: `http://127.0.0.1:${port}/sites/{{domain}}/`,
    siteLog,
    breakSite(domain, broken = true) {
      if (broken) breaks.domains.add(domain.toLowerCase());
      else breaks.domains.delete(domain.toLowerCase());
    },
    rename(kind, from, to) {
      return rename(fleet, kind, from, to);
    },
    breakTheme(theme) {
      const resolved = parseThemeBreak(fleet, theme);
      breaks.themes.add(resolved);
      return resolved;
    },
    breakPlugin(plugin) {
      const resolved = parseItemBreak(fleet, 'plugin', plugin);
      breaks.plugins!.add(resolved);
      return resolved;
    },
    breakCore(version) {
      const resolved = parseCoreBreak(fleet.core, version);
      breaks.core!.add(resolved);
      return resolved;
    },
    unlicensePlugin(name) {
      plugins.unlicensed.add(name);
    },
    openShop(domain, perVisit = 1) {
      shops.open(domain, perVisit);
    },
    setCoreUpdateNoop(noop) {
      core.updateNoop = noop;
    },
    logs,
    pluginListingLag: plugins.lag,
    lookTheme(theme, look) {
      const resolved = parseThemeBreak(fleet, theme);
      breaks.looks!.set(resolved, look);
      return resolved;
    },
    addCarousel(domain) {
      breaks.carousels!.set(domain.toLowerCase(), 0);
    },
    addSlider(domain) {
      breaks.sliders!.set(domain.toLowerCase(), 0);
    },
    setFaults(next, opts = {}) {
      faults.rates = typeof next === 'string' ? parseFaults(next) : next;
      faultsWritesOnly = opts.writesOnly ?? false;
      faultsOnly = opts.only ? new Set(opts.only) : undefined;
    },
    setRate(rate) {
      window = toWindow(rate);
    },
    setToken(next) {
      token = next;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => (logStream ? logStream.end(resolve) : resolve()));
    },
  };
}
