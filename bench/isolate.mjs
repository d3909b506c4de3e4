// Issue 48's measurement (`--only isolate-4,isolate-12,isolate-30`): what `health.on_broken: isolate`
// costs on a site a bulk plugin write broke, against `on_broken: restore` (one restore, all n updates
// lost). One live environment's write carries exactly n plugin updates (the task names n of the 35 it
// is offered in `with.plugins`, in the order the write sends them), one of which breaks the site
// (`--break-plugin NAME@VERSION`); the same night goes twice on fresh simulators of one fleet, once
// restoring and once isolating. Calls, restores and backups are the simulator's request log; rounds
// and the culprit the step's result; the updates kept the simulator's state, read through the CLI after.
//
// Isolation is measured twice. As the simulator's sites do by default, the broken site's PHP error log
// names the culprit's file: the run tries that suspect alone first (one restore beyond the write's, two
// rounds). With `--quiet-breaks` the log names nothing (logging off, a breakage from elsewhere) and the
// run halves: where the culprit sits then decides how many rounds and restores it needs. The decision is
// pure (src/run/life/isolation.ts): replayed here over every culprit position, it gives the average, and the
// position that costs the most restores (then rounds) is the one measured end to end, the worst case.
// The measured restores must be the replay's.
//
// Issue 55: the quiet-log night goes a third time with `health.undo: items_first` (isolate_by_items, the
// culprit where it was): the write's broken site is put back by WP-CLI (`wp plugin install X --version=OLD
// --force`, one command an item), and each round that breaks it goes back by its own items' files the same
// way, with no backup taken and nothing restored. Its rounds are the replay's (the decision counts a put-back
// by files as it counts a restore); its WP-CLI commands are the write's n and each broken round's items.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, round, runCli, startSim, writePlaybook } from './lib.mjs';

// Operations of 1 s (restore.mjs's 2 s halved, so a restoring and an isolating night of up to seven rounds fit in a minute),
// sites answering in 100 ms, and the vendor's one cache clear per 10 s scaled as the operations are.
const OP_MS = 1000;
const SITE_MS = 100;
const R = 20;
// Two sites of 90 plugins each: the blue site's live environment is offered 35 updates none of which is
// flagged vulnerable, enough for every n.
const FLEET = ['--size', '2', '--plugins-per-env', '90', '--seed', '48'];

const { nextRound, restoreBound, startIsolation } = await import(pathToFileURL(join(CLI, '../../run/life/isolation.js')).href);

/** Restores and rounds isolation takes for n updates when the one at `culprit` breaks the site (the decision replayed, no suspect). */
export function replay(n, culprit) {
  const updates = Array.from({ length: n }, (_, i) => ({ plugin: `p${i}`, from: '1.0.0', to: '1.1.0' }));
  let iso = startIsolation(updates);
  for (;;) {
    const next = nextRound(iso);
    if ('end' in next) return { restores: iso.restores, rounds: iso.rounds.length, outcome: next.end.outcome };
    const broken = next.send.includes(`p${culprit}`);
    const put = broken ? { status: 'broken', restored: { status: 'succeeded', health: { outcome: 'healthy' } } } : { status: 'healthy' };
    iso = { ...iso, restores: iso.restores + (broken ? 1 : 0), rounds: [...iso.rounds, { names: next.send, ...put }] };
  }
}

/** Every culprit position replayed: the costliest (restores, then rounds) and the means. */
function positions(n) {
  const all = Array.from({ length: n }, (_, k) => ({ k, ...replay(n, k) }));
  const worst = all.reduce((w, p) => (p.restores > w.restores || (p.restores === w.restores && p.rounds > w.rounds) ? p : w));
  const mean = (f) => round(all.reduce((s, p) => s + p[f], 0) / n, 2);
  return { worst, meanRestores: mean('restores'), meanRounds: mean('rounds'), found: all.every((p) => p.outcome === 'found') };
}

async function inventory(sim) {
  const res = await runCli(['inventory', '--format', 'json'], sim.env);
  if (res.code !== 0) throw new Error(`inventory exited ${res.code}: ${res.stderr}`);
  return JSON.parse(res.stdout).environments;
}

/** The live environment offered the most plugin updates not flagged vulnerable, and those updates by name. */
async function scout(dir) {
  const sim = await startSim([...FLEET, '--op-delay', '0'], dir);
  try {
    const offers = (e) => (e.items.plugin ?? []).filter((p) => p.update_available && !p.update_vulnerable).sort((a, b) => (a.name < b.name ? -1 : 1));
    const env = (await inventory(sim)).filter((e) => e.name === 'live').sort((a, b) => offers(b).length - offers(a).length)[0];
    return { envId: env.id, site: env.site, offered: offers(env) };
  } finally {
    await sim.stop();
  }
}

/** n updates offered, in the order the write sends them (by name), whose one at position k is active (an inactive plugin's code does not run). */
function chooseUpdates(offered, n, k) {
  for (let start = 0; start + n <= offered.length; start++) {
    const names = offered.slice(start, start + n);
    if (names[k].status === 'active') return { names: names.map((p) => p.name), culprit: names[k] };
  }
  throw new Error(`no ${n} updates offered with an active plugin at position ${k + 1}`);
}

/** Isolation as the step's result records it, without each round's health and restore records (bench/results keeps this). */
function brief({ outcome, restores, culprits, rounds, reason, suspect }) {
  return {
    outcome,
    restores,
    culprits,
    ...(suspect ? { suspect } : {}),
    rounds: rounds.map((r) => ({ sent: r.names.length, status: r.status, ...(r.undone ? { by_files: r.undone.status } : {}) })),
    ...(reason ? { reason } : {}),
  };
}

/** The operations a night waited for: backups, writes, restores and cache clears. */
const ops = (night) => night.backups + night.writes + night.restores + night.clears;
const count = (log, endpoint) => log.filter((e) => e.endpoint === endpoint).length;

/** One night: the n updates in one guarded bulk write to the environment, broken by the culprit, then `onBroken`. */
async function night(dir, { envId, names, culprit, onBroken, tag, quiet = false, byItems = false }) {
  const sim = await startSim(
    [...FLEET, '--rate', `${R}/s`, '--op-delay', String(OP_MS), '--site-latency', `${SITE_MS}-${SITE_MS}`, '--clear-cache-gap', String(OP_MS)].concat(
      ['--break-plugin', `${culprit.name}@${culprit.update_version}`],
      quiet ? ['--quiet-breaks'] : [],
    ),
    dir,
  );
  try {
    const report = join(dir, `${tag}.json`);
    const pb =
      `version: 1\nname: ${tag}\nsettings: { rate_limit: ${R}/s }\ntasks:\n  - name: plugins\n    action: plugins.update\n` +
      `    target: { ids: ["${envId}"] }\n    with: { plugins: ${JSON.stringify(names)} }\n    backup_first: true\n` +
      `    health: { url: "${sim.site_url}", attempts: 1, on_broken: ${onBroken}${byItems ? ', undo: items_first' : ''} }\n`;
    // A state folder of the night's own: one night's quarantine must not hold the culprit back from the next.
    const state = join(dir, `${tag}-state`);
    mkdirSync(state, { recursive: true });
    const res = await runCli(['run', writePlaybook(dir, pb, `${tag}.yaml`), '--yes', '--report', report, '--state-dir', state], sim.env);
    const log = sim.log();
    const write = JSON.parse(readFileSync(report, 'utf8')).results.find((r) => r.request?.endpoint === 'bulkUpdatePlugins' || r.request?.body?.plugins);
    const env = (await inventory(sim)).find((e) => e.id === envId);
    const installed = new Map(env.items.plugin.map((p) => [p.name, p]));
    const kept = names.filter((name) => installed.get(name)?.update_available === false).length;
    return {
      exit: res.code,
      wallMs: res.wallMs,
      calls: log.length,
      restores: count(log, 'restoreBackup'),
      backups: count(log, 'addManualBackup'),
      // The write (bulk) and its rounds' writes (each item pinned).
      writes: count(log, 'bulkUpdatePlugins') + count(log, 'updatePlugin'),
      // The put-backs by files (health.undo: items_first): one WP-CLI command an item.
      wpCli: count(log, 'runWpCliCommand'),
      clears: count(log, 'clearCache'),
      polls: count(log, 'getOperation'),
      limited: log.filter((e) => e.status === 429).length,
      kept,
      culpritOld: installed.get(culprit.name)?.version === culprit.version,
      sentOrder: write?.request?.body?.plugins?.map((p) => p.name) ?? [],
      isolation: write?.isolation && brief(write.isolation),
      undone: write?.undone?.status,
    };
  } finally {
    await sim.stop();
  }
}

/**
 * Restore, then isolate (the log naming the culprit, a quiet log, a quiet log going back by items),
 * for n updates with the culprit where it costs isolation the most.
 */
async function measure(dir, scouted, n) {
  const pos = positions(n);
  const { names, culprit } = chooseUpdates(scouted.offered, n, pos.worst.k);
  const base = { envId: scouted.envId, names, culprit };
  const restore = await night(dir, { ...base, onBroken: 'restore', tag: `isolate-${n}-restore` });
  const logged = await night(dir, { ...base, onBroken: 'isolate', tag: `isolate-${n}-logged` });
  const isolate = await night(dir, { ...base, onBroken: 'isolate', tag: `isolate-${n}-isolate`, quiet: true });
  const byItems = await night(dir, { ...base, onBroken: 'isolate', tag: `isolate-${n}-by-items`, quiet: true, byItems: true });
  const bound = restoreBound(n);
  const expect = { n, culprit, pos, bound };
  const ok =
    pos.found &&
    loggedOk(logged, expect) &&
    quietOk(isolate, expect) &&
    byItemsOk(byItems, expect) &&
    restore.restores === 1 &&
    restore.kept === 0 &&
    restore.sentOrder.length === n &&
    [restore, logged, isolate, byItems].every((night) => night.limited === 0);
  return { n, culprit: { name: culprit.name, position: pos.worst.k + 1 }, bound, positions: pos, restore, logged, isolate, byItems, ok };
}

/** Isolation found the culprit alone, kept the other n − 1, and left the culprit on its old version. */
function foundIt(night, { n, culprit }) {
  const iso = night.isolation;
  return iso?.outcome === 'found' && iso.culprits.length === 1 && iso.culprits[0].plugin === culprit.name && night.kept === n - 1 && night.culpritOld;
}

/** The log naming the culprit: it goes alone first, 2 restores, 2 rounds. */
function loggedOk(logged, expect) {
  const iso = logged.isolation;
  return foundIt(logged, expect) && iso.suspect?.plugin === expect.culprit.name && logged.restores === 2 && iso.rounds.length === 2;
}

/** A quiet log: halving, with as many restores and rounds as the decision replayed says, within the bound. */
function quietOk(isolate, { n, pos, bound, ...expect }) {
  const iso = isolate.isolation;
  return (
    foundIt(isolate, { n, ...expect }) &&
    !iso.suspect &&
    iso.restores === isolate.restores &&
    isolate.restores <= bound &&
    isolate.restores === pos.worst.restores &&
    iso.rounds.length === pos.worst.rounds &&
    isolate.sentOrder.length === n &&
    isolate.sentOrder.indexOf(expect.culprit.name) === pos.worst.k
  );
}

/**
 * A quiet log going back by items: the replay's rounds, no restore, no backup but the write's own, the
 * write and each broken round put back by their items' files (one WP-CLI command an item), each healing the site.
 */
function byItemsOk(night, { n, pos, ...expect }) {
  const iso = night.isolation;
  const broken = iso?.rounds.filter((r) => r.status === 'broken') ?? [];
  return (
    foundIt(night, { n, ...expect }) &&
    !iso.suspect &&
    night.undone === 'succeeded' &&
    night.restores === 0 &&
    iso.restores === 0 &&
    night.backups === 1 &&
    iso.rounds.length === pos.worst.rounds &&
    broken.length === pos.worst.restores - 1 &&
    broken.every((r) => r.by_files === 'succeeded') &&
    night.wpCli === n + broken.reduce((s, r) => s + r.sent, 0) &&
    night.sentOrder.indexOf(expect.culprit.name) === pos.worst.k
  );
}

/** The scenario for n updates on the site (one night restoring, one isolating); each n is its own, under a minute. */
export function isolationCost(n) {
  return async (dir) => {
    const scouted = await scout(dir);
    if (scouted.offered.length < n) throw new Error(`the fleet offers ${scouted.offered.length} updates on its best live environment, not ${n}`);
    const m = await measure(dir, scouted, n);
    if (!m.isolate.isolation || !m.logged.isolation || !m.byItems.isolation)
      throw new Error(`a night did not isolate: ${JSON.stringify({ logged: m.logged, quiet: m.isolate, byItems: m.byItems })}`);
    return {
      name: `28. isolating the plugin that broke a site against restoring everything: n = ${n} updates offered, one breaking it, the culprit where it costs most (ops ${OP_MS} ms, sites ${SITE_MS} ms, ${R}/s)`,
      figures: figures(m, n),
      runs: m,
      target:
        "isolating: the culprit found, n − 1 updates kept, the culprit on its old version; its suspect from the log: 2 restores, 2 rounds; a quiet log: ≤ 1 + ⌈log2 n⌉ restores (as many as the decision replayed says); by items (undo: items_first, quiet log): 0 restores, 1 backup (the write's), the replay's rounds, each broken round put back by its files; restoring: one restore, none kept; zero 429",
      met: m.ok,
    };
  };
}

/** The scenario's figures: each night, and isolating against restoring (and by items against by restores). */
function figures(m, n) {
  const { restore: r, isolate: i, logged: l, byItems: b } = m;
  return {
    culprit: `${m.culprit.position} of ${n} (the costliest position when the log names no suspect)`,
    restore: `${r.calls} calls, ${r.restores} restore, ${r.backups} backup, wall ${Math.round(r.wallMs)} ms, ${r.kept}/${n} updates kept, exit ${r.exit}`,
    isolate_log_names_it: `${l.calls} calls (${l.writes} writes, ${l.backups} backups, ${l.clears} clears, ${l.polls} polls), ${l.restores} restores, ${l.isolation?.rounds.length} rounds, wall ${Math.round(l.wallMs)} ms, ${l.kept}/${n} updates kept, culprit on its old version: ${l.culpritOld}, exit ${l.exit}`,
    log_names_it_extra: `+${l.calls - r.calls} calls (×${round(l.calls / r.calls, 2)}), +${l.restores - r.restores} restore, wall ×${round(l.wallMs / r.wallMs, 2)}`,
    isolate_quiet_log: `${i.calls} calls (${i.writes} writes, ${i.backups} backups, ${i.clears} clears, ${i.polls} polls), ${i.restores} restores, ${i.isolation?.rounds.length} rounds, wall ${Math.round(i.wallMs)} ms, ${i.kept}/${n} updates kept, culprit on its old version: ${i.culpritOld}, exit ${i.exit}`,
    restore_bound: m.bound,
    extra_calls: i.calls - r.calls,
    calls_ratio: round(i.calls / r.calls, 2),
    extra_restores: i.restores - r.restores,
    extra_backups: i.backups - r.backups,
    extra_wall_ms: Math.round(i.wallMs - r.wallMs),
    wall_ratio: round(i.wallMs / r.wallMs, 2),
    // One environment: its operations go one after another, so they are what the night's time is made of.
    operations_in_series: `${ops(r)} restoring, ${ops(i)} isolating (+${ops(i) - ops(r)}; ${OP_MS} ms each)`,
    wall_ms_per_operation: `${Math.round(r.wallMs / ops(r))} restoring, ${Math.round(i.wallMs / ops(i))} isolating`,
    extra_ms_per_round: Math.round((i.wallMs - r.wallMs) / i.isolation.rounds.length),
    updates_kept: `${i.kept} against ${r.kept}`,
    all_positions_replayed: `${m.positions.meanRestores} restores, ${m.positions.meanRounds} rounds on average (worst ${m.positions.worst.restores}, ${m.positions.worst.rounds})`,
    isolate_by_items: `${b.calls} calls (${b.writes} writes, ${b.wpCli} WP-CLI put-backs, ${b.backups} backups, ${b.restores} restores, ${b.clears} clears, ${b.polls} polls), ${b.isolation.rounds.length} rounds (${b.isolation.rounds.filter((x) => x.by_files).length} put back by files), wall ${Math.round(b.wallMs)} ms, ${b.kept}/${n} updates kept, culprit on its old version: ${b.culpritOld}, exit ${b.exit}`,
    by_items_against_quiet_log: `calls ×${round(b.calls / i.calls, 2)} (${b.calls - i.calls >= 0 ? '+' : ''}${b.calls - i.calls}), wall ×${round(b.wallMs / i.wallMs, 2)}, ${i.restores - b.restores} restores saved, ${i.backups - b.backups} backups saved`,
    answered_429: r.limited + i.limited + l.limited + b.limited,
  };
}
