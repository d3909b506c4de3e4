import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ApiKey } from '../../api/types.js';
import { AuthenticationError, CoordinationError, EXIT, NetworkError, NotFoundError, TimeoutError } from '../../errors.js';
import { inventoryReader, readInventory } from '../../inventory/read.js';
import { describeExpiring, keyFindings } from '../../run/api-keys.js';
import { defaultStateDir } from '../../coord/file-lock.js';
import { readToken, type GlobalOptions, type Runtime } from '../runtime.js';
import { withRuntime } from '../run-scope.js';
import { forTerminal, jsonText } from '../../util/safe-text.js';
import { channelChecks, doctorPlaybook, type ChannelOptions } from './channels.js';
import type { Check } from './check.js';
import { locateChromium, sandboxProblem, VISUAL_USE } from '../../util/chromium.js';
import { wantsVisual } from '../visual.js';
import { ACTIONS } from '../../actions/index.js';
import type { Kind } from '../../inventory/kinds.js';
import type { Playbook } from '../../playbook/types.js';
import { listingChecks } from './listings.js';

export interface DoctorOptions extends ChannelOptions {
  expiryWarning: string;
  reportDir: string;
  strict?: boolean;
  format: 'text' | 'json';
}

export type { Check } from './check.js';

/** A folder a run writes to: created if missing, then a file written and removed in it. */
function writable(check: string, dir: string): Check {
  try {
    mkdirSync(dir, { recursive: true });
    const probe = join(dir, `.sitefleet-doctor-${process.pid}`);
    writeFileSync(probe, '', { flag: 'wx', mode: 0o600 });
    rmSync(probe);
    return { check, status: 'ok', detail: `${resolve(dir)} is writable` };
  } catch (error) {
    return { check, status: 'fail', detail: `${resolve(dir)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
}

/** `health.visual` screenshots pages in the machine's own Chromium: there, or what to install. */
function chromiumCheck(env: Record<string, string | undefined>): Check {
  const found = locateChromium(env, VISUAL_USE);
  return 'problem' in found
    ? { check: 'chromium', status: 'fail', detail: found.problem }
    : { check: 'chromium', status: 'ok', detail: `${found.path} (for health.visual)` };
}

/** Whether Chromium can start its sandbox here (or the playbook turned it off, which is a warning). */
function sandboxCheck(sandboxed: boolean): Check {
  if (!sandboxed) return { check: 'sandbox', status: 'warn', detail: 'settings.visual_sandbox: false: customer pages load in Chromium without its sandbox' };
  const problem = sandboxProblem(process.getuid?.());
  return problem ? { check: 'sandbox', status: 'fail', detail: problem } : { check: 'sandbox', status: 'ok', detail: 'Chromium runs with its sandbox' };
}

/** The service's checks, in the order each depends on the one before; a failure marks the rest as not checked. */
async function serviceChecks(runtime: Runtime, company: string, warnMs: number, warnLabel: string, playbook?: Playbook): Promise<Check[]> {
  const checks: Check[] = [];
  let keys: ApiKey[];
  try {
    keys = (await runtime.caller.read('listApiKeys', { id: company })).api_keys;
    checks.push({ check: 'service', status: 'ok', detail: `${runtime.client.transport.location.origin} answers` });
    checks.push({ check: 'token', status: 'ok', detail: 'accepted' });
    checks.push({ check: 'company', status: 'ok', detail: `${company} is reachable` });
  } catch (error) {
    const unreachable = error instanceof NetworkError || error instanceof TimeoutError;
    checks.push({
      check: 'service',
      status: unreachable ? 'fail' : 'ok',
      detail: unreachable ? (error as Error).message : `${runtime.client.transport.location.origin} answers`,
    });
    if (!unreachable) {
      const auth = error instanceof AuthenticationError;
      checks.push({ check: 'token', status: auth ? 'fail' : 'ok', detail: auth ? 'refused (401): the token is wrong, expired or revoked' : 'accepted' });
      if (!auth)
        checks.push({
          check: 'company',
          status: 'fail',
          detail: error instanceof NotFoundError ? `${company} is not visible to this token (404)` : (error as Error).message,
        });
    }
    return checks;
  }
  const reader = inventoryReader(runtime.caller);
  const inventory = await readInventory(reader, company);
  const envs = inventory.environments.length;
  checks.push({
    check: 'environments',
    status: envs > 0 ? 'ok' : 'fail',
    detail: `${envs} environments, ${inventory.listed.theme?.count ?? 0} themes in the listing`,
  });
  checks.push(...(await listingChecks(reader, company, playbook && ((kind: Kind) => playbook.tasks.some((t) => ACTIONS.get(t.action)?.items === kind)))));
  const findings = keyFindings(keys, Date.now(), warnMs);
  const inactive = findings.inactive.length ? `; not active: ${findings.inactive.map((k) => `"${k.name}" (${k.status})`).join(', ')}` : '';
  checks.push(
    findings.expiring.length
      ? { check: 'api keys', status: 'warn', detail: `${describeExpiring(findings)}: within ${warnLabel}${inactive}` }
      : { check: 'api keys', status: 'ok', detail: `${keys.length} keys; no active key expires within ${warnLabel}${inactive}` },
  );
  return checks;
}

/**
 * Doctor's own few reads stay far below any limit: a 429 to them means another client of the key
 * is using the budget now, and a run would share it.
 */
function rateCheck(runtime: Runtime): Check {
  const limited = runtime.budget.rateLimitedCount;
  if (limited === 0) return { check: 'rate limit', status: 'ok', detail: `no 429 to doctor's reads (budget ${runtime.rate})` };
  return {
    check: 'rate limit',
    status: 'warn',
    detail:
      `the service answered 429 to ${limited} of doctor's few reads: another client of this API key is using the budget. ` +
      'Share it with --coordination, or leave room with settings.headroom',
  };
}

/** Redis (with --coordination), the service, the key and the rate: what doctor learns by asking. */
async function reachChecks(globals: GlobalOptions, opts: DoctorOptions, warnMs: number, playbook?: Playbook): Promise<Check[]> {
  const checks: Check[] = [];
  try {
    // A check should not wait ten minutes for a budget someone else holds: half a minute, then say so.
    await withRuntime({ rateLimitWait: 30_000, ...globals }, globals.company, async (runtime) => {
      if (runtime.coordination.address) checks.push({ check: 'coordination', status: 'ok', detail: `Redis at ${runtime.coordination.address} answers` });
      checks.push(...(await serviceChecks(runtime, globals.company!, warnMs, opts.expiryWarning, playbook)));
      checks.push(rateCheck(runtime));
    });
  } catch (error) {
    if (!(error instanceof CoordinationError)) throw error;
    checks.push({ check: 'coordination', status: 'fail', detail: error.message });
  }
  return checks;
}

/** `sitefleet doctor`: reads only. Returns the exit code: 3 on a failure, 1 on a warning with --strict, else 0. */
export async function runDoctor(globals: GlobalOptions, opts: DoctorOptions, warnMs: number, file?: string): Promise<number> {
  const checks: Check[] = [writable('state dir', join(globals.stateDir ?? defaultStateDir(globals.io.env), 'locks')), writable('report dir', opts.reportDir)];
  // A playbook's channels (ping, webhooks, metrics file), checked without sending anything.
  const given = file ? doctorPlaybook(file, globals.io.env) : { checks: [] };
  checks.push(...given.checks, ...(await channelChecks(given.playbook, opts, globals.io.env)));
  if (given.playbook && wantsVisual(given.playbook.tasks))
    checks.push(chromiumCheck(globals.io.env), sandboxCheck(given.playbook.settings.visual_sandbox !== false));
  const missing = !globals.baseUrl
    ? 'no API base URL: set SITEFLEET_BASE_URL or pass --base-url URL'
    : !globals.company
      ? 'no company: set SITEFLEET_COMPANY or pass --company'
      : undefined;
  let token: string | undefined;
  try {
    token = readToken(globals);
  } catch (error) {
    checks.push({ check: 'token', status: 'fail', detail: (error as Error).message });
  }
  if (missing) checks.push({ check: 'settings', status: 'fail', detail: missing });
  else if (token) checks.push(...(await reachChecks(globals, opts, warnMs, given.playbook)));
  if (opts.format === 'json') globals.io.stdout.write(`${jsonText(checks, 2)}\n`);
  else for (const c of checks) globals.io.stdout.write(`${c.status.padEnd(4)}  ${c.check.padEnd(12)}  ${forTerminal(c.detail)}\n`);
  if (checks.some((c) => c.status === 'fail')) return EXIT.stopped;
  return opts.strict && checks.some((c) => c.status === 'warn') ? EXIT.someFailed : EXIT.ok;
}
