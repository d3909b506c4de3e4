import { describe, expect, it } from 'vitest';
import type { ItemChange } from '../../src/actions/action.js';
import { restoreFrom } from '../../src/actions/index.js';
import { createAjv } from '../../src/util/ajv.js';
import { readBackSchema } from '../../src/util/json-input.js';
import { backupSlotsSummary, backupSlotsText } from '../../src/report/backup-slot-lines.js';
import type { ProbeResult, SiteProbePort } from '../../src/health/http/probe.js';
import { resolveHealth } from '../../src/health/spec.js';
import type { Step } from '../../src/plan/plan.js';
import { Caller } from '../../src/run/caller.js';
import { HealthGate } from '../../src/run/health-gate.js';
import { findRestorePoint } from '../../src/run/restore-point.js';
import { isolate, type IsolationContext } from '../../src/run/life/isolation-round.js';
import { startIsolation } from '../../src/run/life/isolation.js';
import type { IsolationRound, RestorePoint, StepResult } from '../../src/run/types.js';
import type { VisualBaseline } from '../../src/run/visual-gate.js';
import type { VisualSeen } from '../../src/run/visual-outcome.js';
import { taskWatch, watcherFor } from '../../src/run/watcher.js';
import type { Simulator } from '../../src/sim/server.js';
import { systemClock } from '../../src/util/clock.js';
import { requestsTo } from '../helpers/plugins.js';
import { silent } from '../helpers/run.js';
import { useSimulator, waitFor } from '../helpers/sim.js';

const start = useSimulator();
const NAMES = ['p0', 'p1', 'p2', 'p3'];

/** One live environment with four plugins at 1.0.0 and 1.1.0 offered; p0 1.1.0 breaks the site. */
function fourPlugins(sim: Simulator) {
  sim.fleet.pluginCatalog.clear();
  for (const name of NAMES) sim.fleet.pluginCatalog.set(name, { name, title: name, versions: ['1.0.0', '1.1.0'], vulnerable: new Set() });
  const live = [...sim.fleet.environments.values()].find((e) => e.displayName === 'live')!;
  for (const env of sim.fleet.environments.values()) {
    env.plugins.clear();
    if (env === live) for (const name of NAMES) env.plugins.set(name, { version: '1.0.0', status: 'active', updateStatus: 'none', autoUpdateType: 'none' });
  }
  sim.breakPlugin('p0@1.1.0');
  return live;
}

/** A page probe that reads the status only: a 5xx is broken. */
const probe: SiteProbePort = {
  async probe(url): Promise<ProbeResult> {
    const res = await fetch(url);
    await res.arrayBuffer();
    return { status: res.status, url };
  },
};

/**
 * The rounds' context over the simulator, with a scripted visual check (pages always alike): what a
 * run's executor gives isolate(), the journal being `saved`. `looks`: the rounds a look before was
 * taken for; `letGo`: those whose look was let go (its browser context closed), as VisualGate.after does once it compared.
 */
async function harness(sim: Simulator, client: ConstructorParameters<typeof Caller>[0], envId: string) {
  const caller = new Caller(client, { logger: silent, concurrency: 4 });
  const watcher = watcherFor(caller, { intervalMs: 20 }, new AbortController().signal);
  const spec = resolveHealth({ attempts: 2, interval: '20ms', on_broken: 'isolate' }).spec!;
  const gate = new HealthGate(probe, spec, systemClock);
  const url = sim.siteUrl.replace('{{domain}}', sim.fleet.environments.get(envId)!.domains[0]!.name);
  const looks: number[] = [];
  const letGo: number[] = [];
  const journal: StepResult[] = [];
  const watch = taskWatch({}, { intervalMs: 20 });
  // The backups the run still needs (never removed to make room): each restore point the rounds journaled.
  const spared = () =>
    journal.flatMap((r) => [r.restore_point, ...(r.isolation?.rounds ?? []).map((x) => x.restore_point)]).flatMap((p) => (p?.backup_id ? [p.backup_id] : []));
  const ctx: IsolationContext = {
    caller,
    watcher,
    watch,
    kind: 'plugin',
    gate,
    url,
    visual: {
      before(round) {
        looks.push(round);
        return Promise.resolve({ pages: [], close: () => Promise.resolve(void letGo.push(round)) } as VisualBaseline);
      },
      after: async (_round, baseline) => {
        await baseline.close();
        return { record: { outcome: 'passed', pages: [] } } as unknown as VisualSeen;
      },
    },
    restoring: { caller, watcher, watch, update: () => Promise.resolve() },
    slots: () => ({ caller, watcher, watch, logger: silent, slots: 5, ours: (tag) => tag.startsWith('sitefleet-'), spared: new Set(spared()) }),
    logger: silent,
    save: (r) => {
      journal.push(r);
      return Promise.resolve();
    },
    mayGoOn: () => true,
    whyNot: () => 'the maintenance window closed',
    blockedBackoffMs: 20,
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    stop: (reason) => {
      throw new Error(`stopped: ${reason}`);
    },
  };
  return { ctx, caller, looks, letGo, journal, url };
}

/** A restore point on the environment as it is now: a manual backup, taken and listed. */
async function backupNow(caller: Caller, envId: string, tag: string): Promise<RestorePoint> {
  const sent = await caller.call('addManualBackup', { env_id: envId }, { tag }, false);
  const op = (sent.value!.data as { operation_id: string }).operation_id;
  await waitFor(async () => (await caller.poll(op)).value?.state === 'succeeded', 10_000);
  const found = await findRestorePoint(caller, { body: { tag }, params: { env_id: envId } } as unknown as Step, silent);
  expect(found.point.backup_id).not.toBeNull();
  return found.point;
}

/** The write's step, as the plan has it: a bulk update of the four plugins. */
function stepOf(envId: string): Step {
  return {
    id: `0:${envId}`,
    task_index: 0,
    action: 'plugins.update',
    target: { env_id: envId, site: 'acme', environment: 'live' },
    endpoint: 'bulkUpdatePlugins',
    params: { env_id: envId },
    body: { plugins: NAMES.map((name) => ({ name })) },
    idempotent: true,
    updates: NAMES.map((plugin): ItemChange => ({ plugin, from: '1.0.0', to: '1.1.0' })),
  } as unknown as Step;
}

/** The write as a run that died left it: broken, restored healthy, and isolating with `round` its first round. */
function leftBy(step: Step, point: RestorePoint, round: IsolationRound): StepResult {
  const iso = startIsolation(step.updates!);
  return {
    step_id: step.id,
    status: 'failed',
    http_status: 202,
    operation_id: 'op-write',
    attempts: 1,
    error: null,
    reason: 'health: HTTP 500',
    restore_point: point,
    restored: { backup_id: point.backup_id, operation_id: 'op-restore', status: 'succeeded', health: { outcome: 'healthy', detail: 'HTTP 200' } },
    isolation: { ...iso, rounds: [round] },
  };
}

/** One site with the four plugins, the rounds' context over it, a restore point taken now, and the write's step. */
async function begin(manualBackupLimit?: number) {
  const { sim, client } = await start({ sites: 1, seed: 5, operationDelayMs: 20, pageCacheTtlMs: 0, ...(manualBackupLimit ? { manualBackupLimit } : {}) });
  const live = fourPlugins(sim);
  const harnessed = await harness(sim, client, live.id);
  const point = await backupNow(harnessed.caller, live.id, 'sitefleet-before-test');
  return { sim, live, point, step: stepOf(live.id), ...harnessed };
}

describe('isolation with visual checks, resumed in its first round', () => {
  it('killed after the round\u2019s write left (it broke the site): the resume checks the site and restores it, never leaving it broken', async () => {
    const { sim, live, point, step, ctx, caller, looks, url } = await begin();
    // The round's write went (its look before was taken by the process that died), and broke the site.
    const sent = await caller.call('bulkUpdatePlugins', { env_id: live.id }, { plugins: [{ name: 'p0' }, { name: 'p1' }] }, true);
    const op = (sent.value!.data as { operation_id: string }).operation_id;
    await waitFor(async () => (await caller.poll(op)).value?.state === 'succeeded', 10_000);
    expect((await fetch(url)).status).toBe(500);
    const restoresBefore = requestsTo(sim, 'restoreBackup').length;

    const ended = await isolate(ctx, step, leftBy(step, point, { names: ['p0', 'p1'], status: 'sending', restore_point: point, operation_ids: [] }));
    const first = ended.isolation!.rounds[0]!;
    // Its pages cannot be compared (no look before), but its page answers 500: broken, and put back.
    expect(first, JSON.stringify(ended.isolation)).toMatchObject({ status: 'broken', restored: { status: 'succeeded', health: { outcome: 'healthy' } } });
    expect(looks).not.toContain(1);
    expect(requestsTo(sim, 'restoreBackup').length).toBeGreaterThan(restoresBefore);
    expect((await fetch(url)).status).toBe(200);
    expect(live.plugins.get('p0')!.version).toBe('1.0.0');
  });

  it('killed before the round\u2019s write left (its restore point in hand): the resume takes the look before and goes on to the culprit', async () => {
    const { sim, live, point, step, ctx, looks, url } = await begin();
    const writesBefore = requestsTo(sim, 'updatePlugin').length;

    const ended = await isolate(ctx, step, leftBy(step, point, { names: ['p0', 'p1'], status: 'sending', restore_point: point }));
    expect(ended.isolation, JSON.stringify(ended.isolation)).toMatchObject({ outcome: 'found', culprits: [{ plugin: 'p0' }] });
    expect(looks).toContain(1);
    expect(requestsTo(sim, 'updatePlugin').length).toBeGreaterThan(writesBefore);
    expect(Object.fromEntries(NAMES.map((n) => [n, live.plugins.get(n)!.version]))).toEqual({ p0: '1.0.0', p1: '1.1.0', p2: '1.1.0', p3: '1.1.0' });
    expect((await fetch(url)).status).toBe(200);
  });

  it('killed while the backup of a round after a healthy one was being asked for: the resume finds it by its tag, never asks twice', async () => {
    const { sim, live, point, step, ctx, caller, looks } = await begin();
    // Round 1 (p1) went in healthy; round 2's backup was asked for, and made, as the run died.
    const sent = await caller.call('bulkUpdatePlugins', { env_id: live.id }, { plugins: [{ name: 'p1' }] }, true);
    const op = (sent.value!.data as { operation_id: string }).operation_id;
    await waitFor(async () => (await caller.poll(op)).value?.state === 'succeeded', 10_000);
    const second = await backupNow(caller, live.id, 'sitefleet-before-test-round-2');
    const backupsBefore = requestsTo(sim, 'addManualBackup').length;
    const left = leftBy(step, point, { names: ['p1'], status: 'healthy' });
    left.isolation!.rounds.push({ names: ['p0'], status: 'sending', backup: { operation_id: null, status: 'sending' } });

    const ended = await isolate(ctx, step, left);
    expect(ended.isolation, JSON.stringify(ended.isolation)).toMatchObject({ outcome: 'found', culprits: [{ plugin: 'p0' }] });
    expect(ended.isolation!.rounds[1]).toMatchObject({
      status: 'broken',
      restore_point: second,
      restored: { backup_id: second.backup_id, status: 'succeeded' },
    });
    expect(requestsTo(sim, 'addManualBackup').length).toBe(backupsBefore);
    expect(looks).toContain(2);
    expect(Object.fromEntries(NAMES.map((n) => [n, live.plugins.get(n)!.version]))).toEqual({ p0: '1.0.0', p1: '1.1.0', p2: '1.1.0', p3: '1.1.0' });
  });

  it('killed while a broken round\u2019s restore was followed: the resume follows that restore, sends none again, and goes on', async () => {
    const { sim, live, point, step, ctx, caller } = await begin();
    // Round 1 (p0, p1) broke the site; its restore was accepted as the run died.
    const sent = await caller.call('bulkUpdatePlugins', { env_id: live.id }, { plugins: [{ name: 'p0' }, { name: 'p1' }] }, true);
    const op = (sent.value!.data as { operation_id: string }).operation_id;
    await waitFor(async () => (await caller.poll(op)).value?.state === 'succeeded', 10_000);
    const restore = await caller.call('restoreBackup', { target_env_id: live.id }, restoreFrom.request({ env_id: live.id }, point.backup_id!).body, false);
    const restoreOp = (restore.value!.data as { operation_id: string }).operation_id;
    const restoresBefore = requestsTo(sim, 'restoreBackup').length;
    const left = leftBy(step, point, {
      names: ['p0', 'p1'],
      status: 'broken',
      restore_point: point,
      operation_ids: [op],
      restored: { backup_id: point.backup_id, operation_id: restoreOp, status: 'accepted' },
    });

    const ended = await isolate(ctx, step, left);
    expect(ended.isolation, JSON.stringify(ended.isolation)).toMatchObject({ outcome: 'found', culprits: [{ plugin: 'p0' }] });
    expect(ended.isolation!.rounds[0]).toMatchObject({ restored: { status: 'succeeded', health: { outcome: 'healthy' } } });
    // The rounds after restored the site once more (p0 alone), never round 1 again.
    expect(requestsTo(sim, 'restoreBackup').length - restoresBefore).toBe(ended.isolation!.restores - 2);
    expect(Object.fromEntries(NAMES.map((n) => [n, live.plugins.get(n)!.version]))).toEqual({ p0: '1.0.0', p1: '1.1.0', p2: '1.1.0', p3: '1.1.0' });
  });

  it('the window closes once a round\u2019s write left: the round is followed and judged, the site it broke restored, and no round goes after', async () => {
    const { sim, point, step, ctx, url } = await begin();
    const writesBefore = requestsTo(sim, 'updatePlugin').length;
    // Closed as soon as the service has the first round's first write: the round's other write is part of it, and goes.
    const closed = () => requestsTo(sim, 'updatePlugin').length > writesBefore;
    const started: StepResult = { ...leftBy(step, point, { names: [], status: 'healthy' }) };
    started.isolation!.rounds = [];

    const ended = await isolate({ ...ctx, mayGoOn: () => !closed() }, step, started);
    expect(requestsTo(sim, 'updatePlugin').length - writesBefore).toBe(2);
    expect(ended.isolation, JSON.stringify(ended.isolation)).toMatchObject({
      outcome: 'isolating',
      rounds: [{ names: ['p0', 'p1'], status: 'broken', restored: { status: 'succeeded', health: { outcome: 'healthy' } } }],
      reason: 'stopped before round 2: the maintenance window closed',
    });
    expect((await fetch(url)).status).toBe(200);
  });

  it('every look before a round is let go once isolation ends, a round its page broke (no comparison) too: none keeps a browser context and its proxy open', async () => {
    const { point, step, ctx, looks, letGo } = await begin();
    const started: StepResult = leftBy(step, point, { names: [], status: 'healthy' });
    started.isolation!.rounds = [];

    const ended = await isolate(ctx, step, started);
    // Round 1 (p0, p1) and round 2 (p0) broke the site by its page, which no comparison was needed for; round 3 (p1, p2, p3) passed its look.
    expect(ended.isolation, JSON.stringify(ended.isolation)).toMatchObject({ outcome: 'found', culprits: [{ plugin: 'p0' }] });
    expect(ended.isolation!.rounds.map((r) => r.status)).toEqual(['broken', 'broken', 'healthy']);
    expect(looks).toEqual([1, 2, 3]);
    expect([...letGo].sort()).toEqual(looks);
  });

  it('a round whose pages could not be looked at (or changed past hold_over) is no healthy round: isolation stops there, saying why', async () => {
    const { point, step, ctx } = await begin();
    const started: StepResult = leftBy(step, point, { names: [], status: 'healthy' });
    started.isolation!.rounds = [];
    const unchecked = {
      record: { outcome: 'not checked', pages: [] },
      held: { code: 'visual_unchecked', url: 'https://acme.test/', override: 'look at it', unchecked: 1, detail: 'the browser went away' },
    } as unknown as VisualSeen;
    const visual = { ...ctx.visual!, after: () => Promise.resolve(unchecked) };

    const ended = await isolate({ ...ctx, visual }, step, started);
    // Round 1 (p0, p1) broke the site by its page; round 2 (p0 alone) too; the deferred p1, p2, p3 went
    // in a round whose pages nobody saw: that round is not called healthy.
    const last = ended.isolation!.rounds.at(-1)!;
    expect(last, JSON.stringify(ended.isolation)).toMatchObject({ status: 'unknown', reason: expect.stringContaining('visual_unchecked') as unknown });
    expect(ended.isolation!.outcome).toBe('stopped');
  });
});

describe('a release landing while isolation goes on', () => {
  it('rounds send each update pinned to the version the write judged: a newer release is never installed unjudged', async () => {
    const { sim, live, point, step, ctx } = await begin();
    // Between the write and its rounds, every plugin gets a 1.2.0 (the bulk update would install it).
    for (const name of NAMES) sim.fleet.pluginCatalog.get(name)!.versions.push('1.2.0');
    const started = leftBy(step, point, { names: [], status: 'healthy' });
    started.isolation!.rounds = [];

    const ended = await isolate(ctx, step, started);
    expect(ended.isolation, JSON.stringify(ended.isolation)).toMatchObject({ outcome: 'found', culprits: [{ plugin: 'p0' }] });
    expect(Object.fromEntries(NAMES.map((n) => [n, live.plugins.get(n)!.version]))).toEqual({ p0: '1.0.0', p1: '1.1.0', p2: '1.1.0', p3: '1.1.0' });
    expect(requestsTo(sim, 'bulkUpdatePlugins')).toEqual([]);
    for (const e of requestsTo(sim, 'updatePlugin')) expect((e.body as { update_version: string }).update_version).toBe('1.1.0');
  });
});

describe("a round's backup and the environment's five manual backup slots", () => {
  /** The write's restore point, and `person` backups a person took: round 1 (p1) went in healthy, so round 2 needs a backup. */
  async function full(person: string[], ours: string[]) {
    const begun = await begin(5);
    const { caller, live, point, step } = begun;
    for (const tag of [...ours, ...person]) await backupNow(caller, live.id, tag);
    const sent = await caller.call('updatePlugin', { env_id: live.id }, { name: 'p1', update_version: '1.1.0' }, true);
    const op = (sent.value!.data as { operation_id: string }).operation_id;
    await waitFor(async () => (await caller.poll(op)).value?.state === 'succeeded', 10_000);
    return { ...begun, left: leftBy(step, point, { names: ['p1'], status: 'healthy' }) };
  }
  const manual = (live: { backups: { note?: string | null; type?: string }[] }) => live.backups.filter((b) => b.type === 'manual');
  const tags = (live: { backups: { note?: string | null; type?: string }[] }) => manual(live).map((b) => b.note);

  it('makes room by removing a backup sitefleet made on an earlier night, never a person’s, never this run’s restore point', async () => {
    // With the site's own 'before launch' (a person's), three of the five.
    const person = ['before-migration', 'client-copy'];
    const { ctx, step, live, left, point } = await full(person, ['sitefleet-before-test-2026-10-01']);
    expect(manual(live).length).toBe(5);

    const ended = await isolate(ctx, step, left);
    expect(ended.isolation, JSON.stringify(ended.isolation)).toMatchObject({ outcome: 'found', culprits: [{ plugin: 'p0' }] });
    expect(tags(live)).toEqual(expect.arrayContaining([...person, point.tag, 'sitefleet-before-test-round-2']));
    expect(tags(live)).not.toContain('sitefleet-before-test-2026-10-01');
    expect(manual(live).length).toBeLessThanOrEqual(5);
    // The removal is on the round's record, so in the report and the run's line on slots.
    const round = ended.isolation!.rounds.find((r) => r.room);
    expect(round?.room).toEqual([{ id: expect.any(Number), tag: 'sitefleet-before-test-2026-10-01', why: 'room' }]);
    expect(backupSlotsSummary([ended])).toMatch(/^removed 1 backup sitefleet made on 1 environment \(1 to make room\)/);
    // And a journal or report holding it is read back (resume, report): the records schema knows the field.
    const ajv = createAjv().addSchema(readBackSchema('records.schema.json'));
    const valid = ajv.compile({ $ref: 'https://sitefleet.dev/schemas/records.schema.json#/$defs/step_result' });
    expect(valid(ended), JSON.stringify(valid.errors)).toBe(true);
    expect(backupSlotsText(ended)).toMatch(/^removed backups \d+ \(sitefleet-before-test-2026-10-01, to make room for isolation round \d\)$/);
  });

  it('every other slot a person’s: the round is not sent, isolation stops saying so, and the site stays healthy', async () => {
    const person = ['before launch', 'a', 'b', 'c'];
    const { ctx, step, live, left, url, sim } = await full(person.slice(1), []);
    const writesBefore = requestsTo(sim, 'updatePlugin').length;

    const ended = await isolate(ctx, step, left);
    expect(ended.isolation, JSON.stringify(ended.isolation)).toMatchObject({ outcome: 'stopped', rounds: [{ status: 'healthy' }, { status: 'failed' }] });
    expect(ended.isolation!.reason).toContain('no_backup_slot');
    expect(tags(live)).toEqual(expect.arrayContaining(person));
    expect(requestsTo(sim, 'updatePlugin').length).toBe(writesBefore);
    expect((await fetch(url)).status).toBe(200);
  });
});
