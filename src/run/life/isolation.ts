import type { ItemChange } from '../../actions/action.js';
import { itemOf, nameOf, type ItemRef } from '../../inventory/kinds.js';
import type { Isolation, IsolationRound, RestoreStatus } from '../types.js';

/**
 * `health.on_broken: isolate`, as a pure decision over the rounds journaled so far: which updates the
 * next round sends, or how isolation ended. The executor only performs rounds (isolation-round.ts);
 * everything known is replayed from the record, so a resume decides exactly as the run would have.
 *
 * The write itself is round 0: all n updates sent, the site broken, restored. From then on the
 * candidates are a set known to break the site when sent on top of what is installed:
 * - the suspect the error log named is tried alone first: broken, it is the culprit at the cost of one
 *   restore; healthy, it stays installed and the others are the candidates;
 * - otherwise the first half of the candidates is sent (the smaller half when odd): broken, it is the
 *   new candidates and the other half waits (`deferred`); healthy, it stays and the rest still breaks
 *   the site (the same updates in all), so the rest are the candidates;
 * - one candidate seen breaking the site alone is a culprit; one left by elimination is sent alone
 *   first (`not reproduced` when healthy: a first breakage that does not come back quarantines nothing);
 * - once no candidate is left, the deferred updates go in one round: with one culprit they are fine;
 * - a round whose restore did not put the site back (or that could not be judged) ends isolation; one
 *   that broke the site alone has named its culprit all the same.
 *
 * With one culprit this takes at most 1 + ⌈log2 n⌉ restores, the write's own included: each halving
 * level costs at most one, and the lone try after an elimination only follows a healthy last level.
 * A second culprit among the deferred updates breaks their round: the site is restored (a broken site
 * is never left so), and isolation goes on only while a round's restore stays within the bound.
 */

/** Restores (or put-backs by files) isolation may use for a write of n updates, the write's own first one included. */
export function restoreBound(n: number): number {
  return 1 + Math.ceil(Math.log2(Math.max(n, 1)));
}

/** Restores used: the write's own, and one for each round whose restore went (or may have). The record's `restores` is this, kept for its readers. */
export function restoresUsed(iso: Pick<Isolation, 'rounds'>): number {
  return 1 + iso.rounds.filter((r) => r.restored && r.restored.status !== 'not sent').length;
}

/** The record isolation starts from, once the write's own restore put the site back. */
export function startIsolation(updates: readonly ItemChange[], suspect?: ItemRef): Isolation {
  const named = suspect && updates.some((u) => sameItem(u, suspect)) ? { suspect } : {};
  return { updates: [...updates], ...named, rounds: [], outcome: 'isolating', culprits: [], restores: 1 };
}

export type NextRound = { send: string[] } | { end: Pick<Isolation, 'outcome' | 'culprits' | 'left' | 'reason'> };

/** What is known after the rounds so far: installed, candidates (known to break), deferred (not yet sent), culprits. */
interface Known {
  installed: string[];
  candidates: string[] | undefined;
  deferred: string[];
  culprits: string[];
  /** Names tried alone that stayed healthy. */
  triedAlone: Set<string>;
  /** A round that could not be judged ended it. */
  failed?: IsolationRound;
}

/** Replays the journaled rounds over the write's own breakage (round 0). */
export function known(iso: Isolation): Known {
  const state: Known = { installed: [], candidates: undefined, deferred: [], culprits: [], triedAlone: new Set() };
  broke(state, iso.updates.map(nameOfChange));
  for (const round of iso.rounds) {
    if (round.status === 'healthy') healthy(state, round.names);
    else if (round.status === 'broken' && putBack(round)) broke(state, round.names);
    else {
      // Seen breaking the site (alone: a culprit, quarantined) whatever became of its restore; isolation stops here.
      if (round.status === 'broken') broke(state, round.names);
      return { ...state, failed: round };
    }
  }
  return state;
}

/**
 * A broken round's site was put back (restored, or by its items' own files) and seen healthy: the next
 * round starts from a known state. Not so a by-items round restored to before the write: the rounds
 * before it that went in healthy were undone with it.
 */
function putBack(round: IsolationRound): boolean {
  if (undidTheWrite(round)) return false;
  const back = round.restored ?? round.undone;
  return back?.status === 'succeeded' && back.health?.outcome === 'healthy';
}

/**
 * The ways back isolation used, the write's own first: restores and (health.undo: items_first) put-backs
 * by files alike. A bound on them bounds the rounds that may break the site, whichever way they go back.
 */
function waysBackUsed(iso: Pick<Isolation, 'rounds'>): number {
  return 1 + iso.rounds.filter((r) => (r.restored && r.restored.status !== 'not sent') || (r.undone && r.undone.status !== 'not sent')).length;
}

/**
 * A by-items round that its files could not heal goes back to the write's own restore point, taken
 * before every update of the write: once that restore may have run, no update of the write counts as in.
 */
const MAY_HAVE_RUN: ReadonlySet<RestoreStatus> = new Set(['sending', 'accepted', 'succeeded', 'unknown']);

export function undidTheWrite(round: IsolationRound): boolean {
  return round.by_items === true && round.restored !== undefined && MAY_HAVE_RUN.has(round.restored.status);
}

/** Why a round ended isolation: it could not be judged, or the site it broke was not seen put back. */
function failure(round: IsolationRound, n: number): string {
  if (round.status !== 'broken') return `round ${n} could not be judged: ${round.reason ?? round.status}`;
  const r = round.restored;
  const after = r?.health ? `, then the site was ${r.health.outcome}${r.health.detail ? ` (${r.health.detail})` : ''}` : '';
  if (r && undidTheWrite(round)) {
    const files = `round ${n} broke the site and putting its items' files back did not heal it (${round.undone?.reason ?? round.undone?.health?.detail ?? round.undone?.status ?? 'not sent'})`;
    if (r.status !== 'succeeded')
      return `${files}; its restore from the backup taken before the write ended ${r.status}${r.reason ? ` (${r.reason})` : ''}, so every update of the write may be undone: look at the site`;
    const healthy = r.health?.outcome === 'healthy' ? '' : `${after}: look at the site`;
    return `${files}: restored from the backup taken before the write, which undid every update of it${healthy}`;
  }
  return `round ${n} broke the site and its restore ended ${r?.status ?? 'not sent'}${r?.reason ? ` (${r.reason})` : ''}${after}: look at the site`;
}

function broke(state: Known, sent: string[]): void {
  const others = (state.candidates ?? state.deferred).filter((n) => !sent.includes(n));
  if (state.candidates) state.deferred.push(...others);
  else state.deferred = others;
  if (sent.length === 1) {
    state.culprits.push(sent[0]!);
    state.candidates = undefined;
  } else state.candidates = sent;
}

function healthy(state: Known, sent: string[]): void {
  state.installed.push(...sent);
  if (sent.length === 1) state.triedAlone.add(sent[0]!);
  if (!state.candidates) {
    state.deferred = state.deferred.filter((n) => !sent.includes(n));
    return;
  }
  const rest = state.candidates.filter((n) => !sent.includes(n));
  // Every candidate went in and the site stayed healthy: the breakage did not come back.
  state.candidates = rest.length > 0 ? rest : undefined;
}

/** The next round, or how isolation ends. `bound`: the restores it may use (restoreBound). */
export function nextRound(iso: Isolation, bound = restoreBound(iso.updates.length)): NextRound {
  const state = known(iso);
  const changes = (names: readonly string[]) => iso.updates.filter((u) => names.includes(nameOfChange(u)));
  const culprits = changes(state.culprits);
  const left = changes([...(state.candidates ?? []), ...state.deferred]);
  const end = (outcome: Isolation['outcome'], reason?: string): NextRound => ({
    end: { outcome, culprits, ...(left.length > 0 ? { left } : {}), ...(reason ? { reason } : {}) },
  });
  if (state.failed && undidTheWrite(state.failed)) {
    // A round its items' files could not heal was (or may have been) restored from the write's own restore point:
    // nothing of the write is known to be on the site, so none of it is counted in (a later night sees what is).
    const out = iso.updates.filter((u) => !state.culprits.includes(nameOfChange(u)));
    return {
      end: { outcome: 'stopped', culprits, ...(out.length > 0 ? { left: out } : {}), reason: failure(state.failed, iso.rounds.indexOf(state.failed) + 1) },
    };
  }
  if (state.failed) return end('stopped', failure(state.failed, iso.rounds.indexOf(state.failed) + 1));
  const candidates = state.candidates;
  if (candidates) {
    // A round among candidates may break the site: it needs a way back (a restore, or its files) within the bound.
    if (waysBackUsed(iso) >= bound) return end('stopped', `the restore bound (${bound}) was reached with ${candidates.length} updates still suspected`);
    const suspect = iso.suspect && nameOf(iso.suspect);
    if (suspect && candidates.includes(suspect) && candidates.length > 1 && !state.triedAlone.has(suspect)) return { send: [suspect] };
    if (candidates.length === 1) return { send: candidates };
    // The half without the suspect goes first (it was tried alone already, or the log named none).
    const ordered = suspect ? [...candidates.filter((n) => n !== suspect), ...candidates.filter((n) => n === suspect)] : candidates;
    return { send: ordered.slice(0, Math.floor(candidates.length / 2)) };
  }
  if (state.deferred.length > 0) return { send: state.deferred };
  return end(culprits.length > 0 ? 'found' : 'not reproduced');
}

function nameOfChange(u: ItemChange): string {
  return nameOf(u);
}

function sameItem(a: ItemRef, b: ItemRef): boolean {
  const [x, y] = [itemOf(a), itemOf(b)];
  return x !== undefined && x.kind === y?.kind && x.name === y.name;
}
