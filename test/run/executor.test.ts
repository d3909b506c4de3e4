import { describe, expect, it } from 'vitest';
import type { EndpointName } from '../../src/api/endpoints.js';
import type { OperationStatus } from '../../src/api/types.js';
import { AuthenticationError } from '../../src/errors.js';
import type { Environment, Inventory } from '../../src/inventory/inventory.js';
import { parsePlaybook } from '../../src/playbook/load.js';
import { buildPlan } from '../../src/plan/plan.js';
import type { CallOutcome, CallPort, HeldPlace, Outcome } from '../../src/run/caller.js';
import { execute } from '../../src/run/executor.js';
import { decide, DEFAULT_RETRY } from '../../src/run/retry.js';
import type { ExecuteOutcome } from '../../src/run/types.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { silent } from '../helpers/run.js';

/**
 * The executor against a scripted port (call, poll, take a place) and a manual clock: no HTTP, no
 * timers of its own. The end-to-end tests against the simulator stay; these pin the rules.
 */
const COMPANY = '0f1e2d3c-4b5a-4697-8877-665544332211';

function env(i: number): Environment {
  const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  const theme = {
    kind: 'theme' as const,
    name: 'twentytwentyfour',
    status: 'active',
    version: '1.0',
    version_vulnerable: false,
    update_available: true,
    update_version: '1.1',
  };
  return { id, site: `site-${i}`, name: 'live', items: { theme: [{ ...theme, update_vulnerable: false, update_status: '', auto_update_type: '' }] } };
}

function plan(tasks: string, environments = 5) {
  const inventory: Inventory = { company: COMPANY, environments: Array.from({ length: environments }, (_, i) => env(i + 1)), listed: { theme: { count: 1 } } };
  return buildPlan({
    playbook: parsePlaybook(`version: 1\nname: t\ncompany: ${COMPANY}\ntasks:\n${tasks}`, 'pb.yaml', { env: {} }),
    inventory,
    date: '2026-11-22',
  });
}

/** Answers calls and polls from a script; one place at a time, so a stop is seen before the next call. */
class ScriptedPort implements CallPort {
  readonly log: string[] = [];
  #places: Promise<unknown> = Promise.resolve();

  constructor(
    readonly answer: (endpoint: EndpointName, envId: string) => CallOutcome,
    readonly operation: (operationId: string) => OperationStatus['state'],
  ) {}

  async call(endpoint: EndpointName, params: Record<string, string>, _body: unknown, _idempotent: boolean, hooks: { beforeAttempt?(n: number): unknown } = {}) {
    try {
      await hooks.beforeAttempt?.(1);
    } catch (error) {
      // As the caller's pipeline does (call-pipeline.ts `sending`): refused before it left, never sent.
      return { ok: false, attempts: 0, error, decision: { kind: 'failed', reason: 'not sent: run stopped' }, interrupted: true } as CallOutcome;
    }
    const envId = params.env_id ?? '';
    this.log.push(`${endpoint} ${envId.slice(-2)}`);
    return this.answer(endpoint, envId);
  }

  poll(operationId: string): Promise<Outcome<OperationStatus>> {
    const state = this.operation(operationId);
    this.log.push(`poll ${operationId.slice(-2)} ${state}`);
    return Promise.resolve({
      ok: true,
      attempts: 1,
      value: { operation_id: operationId, state, http_status: 200, message: state === 'failed' ? 'theme broke' : undefined },
    });
  }

  withPlace<T>(priority: number, _endpoint: EndpointName, work: (place: HeldPlace) => Promise<T>): Promise<T> {
    const turn = this.#places.then(() => work({ priority } as HeldPlace));
    this.#places = turn.catch(() => undefined);
    return turn;
  }

  read<T>(): Promise<T> {
    return Promise.reject(new Error('this test reads nothing'));
  }
}

/** The company theme listing after every write moved: each of the first `n` environments runs 1.1, no update left. */
function movedListing(n: number) {
  const environments = Array.from({ length: n }, (_, i) => ({
    id: env(i + 1).id,
    site_display_name: `site-${i + 1}`,
    display_name: 'live',
    theme_status: 'active',
    theme_version: '1.1',
    theme_update: 'none',
  }));
  return { company: { themes: { total: 1, items: [{ name: 'twentytwentyfour', environments }] } } };
}

const accepted = (envId: string): CallOutcome => ({ ok: true, attempts: 1, value: { status: 202, data: { operation_id: `op-${envId}` } } });

/** Runs to the end, moving the manual clock a second at a time (polls and pauses wait on it). */
async function runToEnd(clock: ManualClock, running: Promise<ExecuteOutcome>, limitMs = 60 * 60_000): Promise<ExecuteOutcome> {
  let outcome: ExecuteOutcome | undefined;
  void running.then((o) => (outcome = o));
  for (let t = 0; outcome === undefined && t < limitMs; t += 1000) await clock.advance(1000);
  if (!outcome) throw new Error('the run did not end');
  return outcome;
}

const statuses = (outcome: ExecuteOutcome) => [...outcome.results.values()].map((r) => r.status);

describe('executor (scripted port, manual clock)', () => {
  it('a canary whose operation fails stops the rollout: no wave after it is sent', async () => {
    const clock = new ManualClock();
    const p = plan(`  - name: themes\n    action: themes.update\n    target: all\n    max_failures: 0\n    rollout: { canary: 1, waves: ["50%", "100%"] }\n`);
    const canary = p.steps.find((s) => s.wave === 0)!;
    const port = new ScriptedPort(
      (_e, id) => accepted(id),
      (op) => (op === `op-${canary.target.env_id}` ? 'failed' : 'succeeded'),
    );
    const outcome = await runToEnd(clock, execute(p, { caller: port, logger: silent, clock, env: {} }));
    expect(port.log.filter((l) => l.startsWith('bulkUpdateThemes'))).toHaveLength(1);
    expect(outcome.stopped?.kind).toBe('budget');
    expect(outcome.results.get(canary.id)).toMatchObject({ status: 'failed', reason: 'operation failed: theme broke' });
    expect(statuses(outcome).filter((s) => s === 'skipped')).toHaveLength(4);
  });

  it('no write leaves after the window closed by the wall clock, even while its timer has not fired (a busy machine)', async () => {
    const clock = new ManualClock();
    // The signal's timer never fires here; the wall clock passes the window's end after the first write.
    const closesAt = { at: Date.now() + 3_600_000, reason: '--not-after 02:00 (2026-11-22 02:00 UTC)' };
    const port = new ScriptedPort(
      (_e, id) => ((closesAt.at = 0), accepted(id)),
      () => 'succeeded',
    );
    const p = plan(`  - name: php\n    action: php.set_version\n    target: all\n    with: { php_version: "8.3" }\n`);
    const outcome = await runToEnd(clock, execute(p, { caller: port, logger: silent, clock, env: {}, closing: new AbortController().signal, closesAt }));
    expect(port.log.filter((l) => !l.startsWith('poll'))).toHaveLength(1);
    expect(outcome.stopped).toMatchObject({ kind: 'window', reason: closesAt.reason });
    expect(statuses(outcome).filter((s) => s === 'skipped')).toHaveLength(4);
    expect([...outcome.results.values()].filter((r) => r.status === 'skipped').every((r) => r.reason === `window closed: ${closesAt.reason}`)).toBe(true);
  });

  it('a 401 stops the run at once: what was never accepted is skipped (resume sends it), nothing is failed', async () => {
    const clock = new ManualClock();
    const unauthorized = new AuthenticationError(401, 'PUT', '/x', 'bad token');
    const port = new ScriptedPort(
      () => ({ ok: false, attempts: 1, error: unauthorized, decision: decide(unauthorized, 1, true, DEFAULT_RETRY) }),
      () => 'succeeded',
    );
    const outcome = await runToEnd(
      clock,
      execute(plan(`  - name: php\n    action: php.set_version\n    target: all\n    with: { php_version: "8.3" }\n`), {
        caller: port,
        logger: silent,
        clock,
        env: {},
      }),
    );
    expect(port.log).toHaveLength(1);
    expect(outcome.stopped?.kind).toBe('auth');
    expect(statuses(outcome)).toEqual(['skipped', 'skipped', 'skipped', 'skipped', 'skipped']);
  });

  it("a write waits for its environment's previous operation to end (its poll says so) before it is sent", async () => {
    const clock = new ManualClock();
    let phpDone = false;
    const port = new ScriptedPort(
      (endpoint, id) => accepted(endpoint === 'modifyPhpVersion' ? 'php' : id),
      (op) => (op !== 'op-php' || phpDone ? 'succeeded' : 'in_progress'),
    );
    const p = plan(
      `  - name: php\n    action: php.set_version\n    target: all\n    with: { php_version: "8.3" }\n  - name: themes\n    action: themes.update\n    target: all\n`,
      1,
    );
    const running = execute(p, { caller: port, logger: silent, clock, env: {} });
    await clock.advance(10_000);
    expect(port.log.filter((l) => !l.startsWith('poll'))).toEqual(['modifyPhpVersion ']); // its operation is still running
    phpDone = true;
    const outcome = await runToEnd(clock, running);
    const sends = port.log.filter((l) => !l.startsWith('poll'));
    expect(sends).toEqual(['modifyPhpVersion ', 'bulkUpdateThemes 01']);
    expect(port.log.indexOf('poll hp succeeded')).toBeLessThan(port.log.indexOf('bulkUpdateThemes 01'));
    expect(statuses(outcome)).toEqual(['succeeded', 'accepted']);
  });

  it('the pause between waves is waited on the injected clock', async () => {
    const clock = new ManualClock();
    const port = new ScriptedPort(
      (_e, id) => accepted(id),
      () => 'succeeded',
    );
    // Each wave's writes are read back: the theme listing shows every environment on the new version.
    port.read = <T>() => Promise.resolve(movedListing(3) as T);
    const p = plan(`  - name: themes\n    action: themes.update\n    target: all\n    rollout: { canary: 1, waves: ["100%"], pause: 10m }\n`, 3);
    const running = execute(p, { caller: port, logger: silent, clock, env: {} });
    await clock.advance(9 * 60_000);
    expect(port.log.filter((l) => l.startsWith('bulk'))).toHaveLength(1);
    const outcome = await runToEnd(clock, running);
    expect(port.log.filter((l) => l.startsWith('bulk'))).toHaveLength(3);
    expect(statuses(outcome)).toEqual(['succeeded', 'succeeded', 'succeeded']);
  });

  it('a 401 while reading back a restore point stops the run: the write it guards is not sent', async () => {
    const clock = new ManualClock();
    const p = plan(`  - name: themes\n    action: themes.update\n    target: all\n    backup_first: true\n`, 1);
    const port = new ScriptedPort(
      (_e, id) => accepted(id),
      () => 'succeeded',
    );
    port.read = <T>() => Promise.reject<T>(new AuthenticationError(401, 'GET', '/sites/environments/x/backups', 'key revoked'));
    const outcome = await runToEnd(clock, execute(p, { caller: port, logger: silent, clock, env: {} }));
    expect(outcome.stopped).toMatchObject({ kind: 'auth', reason: 'authentication failed (401): key revoked' });
    expect(port.log.filter((l) => l.startsWith('bulkUpdateThemes'))).toEqual([]);
  });
});
