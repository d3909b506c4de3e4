import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { Environment, InstalledItem, Inventory } from '../../src/inventory/inventory.js';
import { FirstSeen } from '../../src/inventory/first-seen.js';
import { parsePlaybook } from '../../src/playbook/load.js';
import { buildPlan, type Plan, type Step } from '../../src/plan/plan.js';
import { StagingTable, type StagingEntry } from '../../src/inventory/staging-table.js';
import { buildReport, writeJsonAtomic } from '../../src/report/report.js';
import { reportFromJournal } from '../../src/report/from-journal.js';
import { readReport, recordPageOf, runPageOf } from '../../src/app/report-pages.js';
import { readJournalBack } from '../../src/run/journal-read-back.js';
import { Journal, journalPathFor } from '../../src/run/journal.js';
import { restoreReadBack } from '../../src/run/life/restore.js';
import { VisualGate } from '../../src/run/visual-gate.js';
import type { ImageStore } from '../../src/run/visual-images.js';
import type { Isolation, Restored, StepResult, StepStatus, VisualPage } from '../../src/run/types.js';
import type { CameraPort, Shot } from '../../src/health/visual/screenshots.js';
import { encodePng } from '../../src/health/visual/image.js';
import type { HealthSpec } from '../../src/health/spec.js';
import { ManualClock } from '../helpers/manual-clock.js';

/**
 * What sitefleet writes, it reads: every shape the writers can produce (plans with release-age and
 * staging decisions, visual verdicts from the real comparison, held reasons, restores) goes through
 * the journal and the report as a run writes them, and each reader accepts it: the journal as resume
 * and restore read it, the report as status, resume and `report` read it, the run's page and the
 * monthly record. A reader that refused one of these would refuse a run's own files the morning
 * after, for the very nights that broke a site.
 */

const COMPANY = '0f1e2d3c-4b5a-4697-8877-665544332211';
const NOW = Date.parse('2026-11-25T02:00:00.000Z');
const DAY = 86_400_000;
const folder = mkdtempSync(join(tmpdir(), 'sitefleet-readback-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** Versions as themes number them, and as they do not. */
const version = fc.constantFrom('1.0', '1.0.0', '1.2.3', '1.2.3.1', '2.0-rc1', '2.0', '6.0', '6.0.0', '10.4.1', 'v3', '2024.11');
const theme = fc.record({
  name: fc.constantFrom('astra', 'neve', 'calm', 'hello-elementor'),
  active: fc.boolean(),
  version,
  update: fc.option(fc.constantFrom('1.0.1', '1.2.4', '1.2.3.2', '2.0-rc2', '2.1', '6.0.1', '10.5.0', '11.0'), { nil: undefined, freq: 6 }),
  version_vulnerable: fc.boolean(),
  update_vulnerable: fc.boolean(),
});

function installed(t: Of<typeof theme>): InstalledItem {
  return {
    kind: 'theme',
    name: t.name,
    status: t.active ? 'active' : 'inactive',
    version: t.version,
    version_vulnerable: t.version_vulnerable,
    update_available: t.update !== undefined,
    update_version: t.update ?? '',
    update_vulnerable: t.update_vulnerable,
    update_status: 'none',
    auto_update_type: 'none',
  };
}

/** The value an arbitrary gives. */
type Of<A> = A extends fc.Arbitrary<infer T> ? T : never;

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** Sites of a live environment and perhaps a staging one; site names may repeat (display names need not be unique). */
const fleet = fc.array(
  fc.record({
    site: fc.constantFrom('acme', 'blue', 'coral', 'acme'),
    staging: fc.boolean(),
    themes: fc.uniqueArray(theme, { minLength: 1, maxLength: 3, selector: (t) => t.name }),
    stagingThemes: fc.uniqueArray(theme, { minLength: 0, maxLength: 3, selector: (t) => t.name }),
  }),
  { minLength: 1, maxLength: 5 },
);

function inventoryOf(sites: Of<typeof fleet>): Inventory {
  const environments: Environment[] = [];
  let n = 0;
  sites.forEach((s, i) => {
    const site = `${s.site}-${i % 2}`;
    environments.push({ id: id(++n), site, name: 'live', items: { theme: s.themes.map(installed) } });
    if (s.staging) environments.push({ id: id(++n), site, name: 'staging', items: { theme: s.stagingThemes.map(installed) } });
  });
  return { company: COMPANY, listed: { theme: { count: 4 } }, environments };
}

/** The task's options: each guard on or off, in the playbook's own words. */
const options = fc.record({
  release_age: fc.option(fc.constantFrom('1d', '3d', '14d'), { nil: undefined }),
  max_bump: fc.option(fc.constantFrom('patch', 'minor', 'major'), { nil: undefined }),
  staging_first: fc.boolean(),
  backup_first: fc.boolean(),
  visual: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, fc.constant(false)),
  fail_on_hold: fc.boolean(),
});

function playbookText(o: Of<typeof options>): string {
  const withs = ['skip_vulnerable_updates: false', o.release_age && `min_release_age: ${o.release_age}`, o.max_bump && `max_bump: ${o.max_bump}`].filter(
    Boolean,
  );
  const restore = o.backup_first ? ', on_broken: restore' : '';
  const visual = o.visual ? `, visual: { gap: 1s${o.fail_on_hold ? ', fail_on_hold: true' : ''} }` : '';
  return [
    'version: 1',
    'name: night',
    `company: ${COMPANY}`,
    'tasks:',
    '  - name: themes',
    '    action: themes.update',
    '    target: { environment: live }',
    `    with: { ${withs.join(', ')} }`,
    o.backup_first ? '    backup_first: true' : '',
    `    health: { url: 'https://{{site}}.example/'${restore}${visual} }`,
    o.staging_first ? '    rollout: { staging_first: true, soak: 1d, no_staging: live }' : '',
  ]
    .filter(Boolean)
    .join('\n');
}

/** First-seen times and staging lines the stores might hold: anything, from long ago to now. */
const history = fc.record({
  seen: fc.array(fc.record({ theme: fc.constantFrom('astra', 'neve', 'calm'), version, daysAgo: fc.integer({ min: 0, max: 60 }) }), { maxLength: 8 }),
  staged: fc.array(
    fc.record({
      env: fc.integer({ min: 1, max: 10 }),
      theme: fc.constantFrom('astra', 'neve', 'calm'),
      version,
      healthy: fc.boolean(),
      daysAgo: fc.integer({ min: 0, max: 5 }),
    }),
    { maxLength: 6 },
  ),
});

function planOf(sites: Parameters<typeof inventoryOf>[0], o: Of<typeof options>, h: Of<typeof history>): Plan {
  const playbook = parsePlaybook(playbookText(o), 'night.yaml', { env: {} });
  const firstSeen = FirstSeen.of(h.seen.map((s) => ({ theme: s.theme, version: s.version, at: NOW - s.daysAgo * DAY })));
  const entries: StagingEntry[] = h.staged.map((s) => ({
    env_id: id(s.env),
    theme: s.theme,
    version: s.version,
    kind: s.healthy ? 'healthy' : 'failed',
    at: NOW - s.daysAgo * DAY,
    ...(s.healthy ? {} : { why: 'its staging update failed' }),
  }));
  return buildPlan({
    playbook,
    inventory: inventoryOf(sites),
    date: '2026-11-25',
    releases: { now: NOW, firstSeen },
    staging: { now: NOW, table: StagingTable.of(entries) },
  });
}

/** A page as a screenshot shows it: rows of colour, some of them noise. */
const page = fc
  .record({
    width: fc.integer({ min: 8, max: 24 }),
    content: fc.array(fc.integer({ min: 0, max: 0xfffffe }), { minLength: 2, maxLength: 30 }),
    /** The page's white background below its content. */
    margin: fc.integer({ min: 0, max: 30 }),
  })
  .map(({ width, content, margin }) => ({ width, rows: [...content, ...Array<number>(margin).fill(0xffffff)] }));

/**
 * What the write does to the page: nothing, a little, a shift (the page longer, or clipped at its
 * max height), its styles gone (taller), reflowed (its last row now first, the rest changed), blank,
 * a new page; or no screenshot at all.
 */
const change = fc.constantFrom('same', 'noise', 'shift', 'clipped bar', 'unstyled', 'reflowed', 'blank', 'other', 'no screenshot');

function picture(width: number, rows: number[], speckle = 0): Shot {
  const data = new Uint8Array(width * rows.length * 4);
  rows.forEach((rgb, y) => {
    for (let x = 0; x < width; x++) data.set([rgb >> 16, (rgb >> 8) & 255, rgb & 255, 255], (y * width + x) * 4);
  });
  for (let k = 0; k < speckle; k++) data.set([255, 255, 0, 255], ((k * 7919) % (width * rows.length)) * 4);
  return { png: Buffer.from(encodePng({ width, height: rows.length, data })), height: rows.length };
}

function after(p: Of<typeof page>, how: string): Shot | undefined {
  const { width, rows } = p;
  if (how === 'same') return picture(width, rows);
  if (how === 'noise') return picture(width, rows, 3);
  if (how === 'shift') return picture(width, [0x123456, 0x654321, ...rows]);
  if (how === 'clipped bar') return picture(width, [0x123456, 0x654321, ...rows.slice(0, -2)]);
  if (how === 'reflowed') return picture(width, [rows.at(-1)!, ...rows.slice(0, -1).map((r) => r ^ 0x808080)]);
  // Unstyled: the background first, then the content, bare; as tall, or taller and clipped.
  if (how === 'unstyled') {
    const bare = [...rows.filter((r) => r === 0xffffff), ...rows.filter((r) => r !== 0xffffff).map((r) => r ^ 0x0f0f0f)];
    return picture(width, [...bare, ...rows.map((r) => r ^ 0x0f0f0f)].slice(0, rows.length));
  }
  if (how === 'blank')
    return picture(
      width,
      rows.map(() => 0xffffff),
    );
  if (how === 'other') return picture(width, rows.map((r) => (r * 31 + 7) & 0xffffff).slice(0, Math.max(1, rows.length >> 1)));
  return undefined;
}

/** The camera a test scripts: two shots before the write (the second with noise or not), then the page after it. */
function scriptedCamera(p: Of<typeof page>, noisyBefore: boolean, how: string): CameraPort {
  const shots: (Shot | undefined)[] = [
    picture(p.width, p.rows),
    picture(p.width, p.rows, noisyBefore ? p.rows.length * p.width : 0),
    after(p, how),
    after(p, how),
  ];
  return {
    site: () =>
      Promise.resolve({
        shoot: () => {
          const shot = shots.shift();
          return shot ? Promise.resolve(shot) : Promise.reject(new Error('net::ERR_CONNECTION_REFUSED'));
        },
        close: () => Promise.resolve(),
      }),
    close: () => Promise.resolve(),
  };
}

/** Every page the real check judged across the runs: the property must have met the shapes it is about. */
const seenPages: VisualPage[] = [];
const heldCodes = new Set<string>();
const isolatedSeen = new Set<string>();

const memoryImages: ImageStore = { keep: (step, n, kind) => `night.json.visual/${step}-p${n}-${kind}.png` };
const quiet = pino({ level: 'silent' });

/** The real visual check on a scripted page: what its verdict, record and held reason are. */
async function visualResult(step: Step, health: HealthSpec, p: Of<typeof page>, noisy: boolean, how: string): Promise<Partial<StepResult>> {
  const clock = new ManualClock();
  const gate = new VisualGate(scriptedCamera(p, noisy, how), memoryImages, clock, quiet);
  const url = `https://${step.target.site ?? 'x'}.example/`;
  const judged = (async () => gate.after(step.id, await gate.before(step.id, url, health), health))();
  for (let i = 0; i < 10; i++) await clock.advance(health.visual!.gap_ms);
  const seen = await judged;
  seenPages.push(...seen.record.pages);
  if (seen.held) heldCodes.add(seen.held.code);
  const status: StepStatus = seen.broken ? 'failed' : seen.held ? 'held' : 'succeeded';
  return { status, visual: seen.record, ...(seen.held ? { held: seen.held } : {}), reason: seen.broken ?? null };
}

const restored: fc.Arbitrary<Restored> = fc.record(
  {
    backup_id: fc.option(fc.integer({ min: 1, max: 2 ** 31 }), { nil: null }),
    operation_id: fc.option(fc.constantFrom('backups:restore-1', 'op-2'), { nil: null }),
    status: fc.constantFrom('sending', 'accepted', 'succeeded', 'failed', 'unknown', 'not sent'),
    reason: fc.string({ maxLength: 40 }),
    health: fc.record({ outcome: fc.constantFrom('healthy', 'unhealthy', 'not checked'), detail: fc.string({ maxLength: 40 }) }, { requiredKeys: ['outcome'] }),
  },
  { requiredKeys: ['backup_id', 'operation_id', 'status'] },
);

/** The item an isolation names, a theme as the plan's writes update (a record names its kind by its field). */
const themeName = fc.constantFrom('astra', 'neve', 'calm', 'hello-elementor');
const itemChange = fc.record({ theme: themeName, from: version, to: version });
/**
 * Any one code point but a lone surrogate, drawn as fast-check's `unit: 'binary'` draws it (the same strings for a seed):
 * that unit, when a string arbitrary is made of it, maps all 1.1 million code points back to their draws (~3 s of CPU).
 */
const SURROGATES = 0xe000 - 0xd800;
const codePoint = fc.integer({ min: 0, max: 0x10ffff - SURROGATES }).map(
  (i) => String.fromCodePoint(i < 0xd800 ? i : i + SURROGATES),
  (s) => {
    const cp = typeof s === 'string' ? s.codePointAt(0) : undefined;
    if (cp === undefined || String.fromCodePoint(cp) !== s || (cp >= 0xd800 && cp < 0xe000)) throw new Error('not one code point');
    return cp < 0xd800 ? cp : cp - SURROGATES;
  },
);
/** A fatal error line as the log gave it: any text, control characters, markup and astral characters included, at most 500 code points. */
const logged = fc.record({ theme: themeName, line: fc.string({ unit: codePoint, maxLength: 500 }) });

/** `health.on_broken: isolate`: every outcome, rounds of every status, with their restores and log lines. */
const isolation: fc.Arbitrary<Isolation> = fc.record(
  {
    updates: fc.array(itemChange, { maxLength: 6 }),
    suspect: fc.record({ theme: themeName }),
    rounds: fc.array(
      fc.record(
        {
          names: fc.array(themeName, { maxLength: 4 }),
          restore_point: fc.record({ tag: fc.constant('sitefleet-before'), backup_id: fc.option(fc.integer({ min: 1, max: 2 ** 31 }), { nil: null }) }),
          backup: fc.record({
            operation_id: fc.option(fc.constant('backups:add-manual-1'), { nil: null }),
            status: fc.constantFrom('sending', 'accepted', 'succeeded', 'failed', 'unknown'),
          }),
          status: fc.constantFrom('sending', 'accepted', 'healthy', 'broken', 'failed', 'unknown'),
          operation_ids: fc.array(fc.constantFrom('wp-themes:bulk-update-1', 'wp-theme:update-2'), { maxLength: 2 }),
          visual: fc.constantFrom('passed', 'held', 'broken', 'not checked'),
          reason: fc.string({ maxLength: 40 }),
          restored,
          logged,
        },
        { requiredKeys: ['names', 'status'] },
      ),
      { maxLength: 5 },
    ),
    outcome: fc.constantFrom('isolating', 'found', 'not reproduced', 'stopped'),
    culprits: fc.array(itemChange, { maxLength: 2 }),
    left: fc.array(itemChange, { maxLength: 3 }),
    reason: fc.string({ maxLength: 40 }),
    restores: fc.nat(8),
  },
  { requiredKeys: ['updates', 'rounds', 'outcome', 'culprits', 'restores'] },
);

/** What one step ended as: an answer, and on a guarded write the checks' records. */
const ending = fc.record({
  status: fc.oneof({ weight: 6, arbitrary: fc.constant<StepStatus>('succeeded') }, fc.constantFrom<StepStatus>('accepted', 'failed', 'unknown', 'skipped')),
  page,
  noisy: fc.boolean(),
  how: change,
  restored: fc.option(restored, { nil: undefined }),
  isolation: fc.option(isolation, { nil: undefined }),
  logged: fc.option(logged, { nil: undefined }),
});

async function resultOf(plan: Plan, step: Step, e: Of<typeof ending>): Promise<StepResult> {
  const base: StepResult = {
    step_id: step.id,
    status: e.status,
    http_status: e.status === 'skipped' ? null : 202,
    operation_id: e.status === 'skipped' ? null : `wp-themes:bulk-update-${step.id.length}`,
    attempts: e.status === 'skipped' ? 0 : 1,
    error: null,
    reason: null,
  };
  const health = plan.tasks[step.task_index]!.health;
  if (step.role || !health || e.status !== 'succeeded') return base;
  const checked = health.visual ? await visualResult(step, health, e.page, e.noisy, e.how) : {};
  const result: StepResult = {
    ...base,
    ...checked,
    health: { url: `https://${step.target.site ?? 'x'}.example/`, outcome: 'healthy', before: 'HTTP 200', after: 'HTTP 200' },
    ...(step.backup_step ? { restore_point: { tag: 'sitefleet-before', backup_id: 7 } } : {}),
  };
  if (result.status !== 'failed' || !e.restored) return result;
  const isolated = { ...(e.isolation && { isolation: e.isolation }), ...(e.logged && { logged: e.logged }) };
  return restoreReadBack({ ...result, restored: e.restored, ...isolated });
}

const NOT_BROKEN = { restored: undefined, isolation: undefined, logged: undefined };

/** A night on one site, its page as it was, changed a little, broken, and not looked at after the write. */
const EXAMPLES: [Of<typeof fleet>, Of<typeof options>, Of<typeof history>, Of<typeof ending>[]][] = (
  ['same', 'noise', 'reflowed', 'no screenshot'] as const
).map((how) => [
  [
    {
      site: 'acme',
      staging: false,
      themes: [{ name: 'astra', active: true, version: '1.0', update: '1.0.1', version_vulnerable: false, update_vulnerable: false }],
      stagingThemes: [],
    },
  ],
  { release_age: undefined, max_bump: undefined, staging_first: false, backup_first: true, visual: true, fail_on_hold: false },
  { seen: [], staged: [] },
  [{ status: 'succeeded', page: { width: 10, rows: Array.from({ length: 20 }, (_, i) => i * 4099) }, noisy: false, how, ...NOT_BROKEN }],
]);
/** A night whose page went blank: restored, and isolated, with a hostile line in its log. */
const BROKEN_NIGHT: Of<typeof ending> = {
  status: 'succeeded',
  page: { width: 10, rows: Array.from({ length: 20 }, (_, i) => i * 4099) },
  noisy: false,
  how: 'blank',
  restored: { backup_id: 7, operation_id: 'backups:restore-1', status: 'succeeded', health: { outcome: 'healthy' } },
  isolation: {
    updates: [{ theme: 'astra', from: '1.0', to: '1.0.1' }],
    rounds: [{ names: ['astra'], status: 'broken', logged: { theme: 'astra', line: '<b>\u001b[2J\u0000 PHP Fatal error in /x/wp-content/themes/astra/' } }],
    outcome: 'found',
    culprits: [{ theme: 'astra', from: '1.0', to: '1.0.1' }],
    restores: 2,
  },
  logged: { theme: 'astra', line: '<!channel> PHP Fatal error' },
};
EXAMPLES.push([EXAMPLES[0]![0], EXAMPLES[0]![1], EXAMPLES[0]![2], [BROKEN_NIGHT]]);

describe('what sitefleet writes, it reads back', () => {
  it('every plan, verdict, decision and restore the writers produce passes every reader', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fleet, options, history, fc.array(ending, { minLength: 1, maxLength: 12 }), async (sites, o, h, endings) => {
        const plan = planOf(sites, o, h);
        const results = new Map<string, StepResult>();
        for (const [i, step] of plan.steps.entries()) results.set(step.id, await resultOf(plan, step, endings[i % endings.length]!));
        const reportPath = join(folder, `night-${++run}.json`);
        const journalPath = journalPathFor(reportPath);
        const { journal } = await Journal.create(
          journalPath,
          {
            t: 'start',
            v: 1,
            run_id: '5b0c6a52-4d3e-4b8e-9f4a-3c2b1a0f9e8d',
            playbook: 'night.yaml',
            report: reportPath,
            started_at: new Date(NOW).toISOString(),
            plan,
          },
          { fsync: false },
        );
        for (const [step, result] of results) await journal.append({ t: 'result', step, result, at: NOW });
        await journal.append({ t: 'end', at: NOW });
        await journal.close();

        // resume and restore read the journal back; run, resume and restore write the report from it.
        const state = readJournalBack(journalPath);
        expect(state.results.size).toBe(results.size);
        const report = reportFromJournal(state);
        writeJsonAtomic({ flag: '--report', path: reportPath, kind: 'report' }, report);
        // status, resume and `report` read the report back; the run's page and the monthly record draw it.
        const read = readReport(reportPath);
        expect(read.results).toHaveLength(plan.steps.length + plan.skipped.length);
        // An isolation and its log lines come back exactly as the executor wrote them (the line is data, never cleaned).
        for (const [step, result] of results) {
          const back = read.results.find((r) => r.step_id === step)!;
          expect(back.isolation).toEqual(result.isolation);
          expect(back.logged).toEqual(result.logged);
          if (result.isolation) isolatedSeen.add(result.isolation.outcome);
        }
        expect(runPageOf(reportPath, read, {})).toContain('<html');
        expect(recordPageOf([read], {}, {})).toContain('<html');
        expect(buildReport({ plan, mode: 'dry-run', startedAt: new Date(NOW), finishedAt: new Date(NOW) }).summary.total).toBe(read.summary.total);
      }),
      // Each verdict and held code at least once, whatever the random runs draw: the checks below may not depend on luck.
      { numRuns: 60, examples: EXAMPLES },
    );
    // The runs met what the property is about: pages as they were, changed and broken, judged by the real comparison.
    expect(new Set(seenPages.map((p) => p.verdict))).toEqual(new Set(['same', 'changed', 'broken', 'not checked']));
    expect(heldCodes).toEqual(new Set(['visual_difference', 'visual_unchecked']));
    expect(isolatedSeen.size).toBeGreaterThan(0);
    for (const p of seenPages) expect(p.changed_percent ?? 0).toBeLessThanOrEqual(100);
  }, 60_000);
});
