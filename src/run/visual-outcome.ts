import { percentText, type VisualSpec } from '../health/visual/spec.js';
import type { HeldReason, VisualDifference, VisualPage, VisualRecord, VisualUnchecked } from './types.js';

/** What a step's pages add up to: its record, and why it is held or broken (for its reason). */
export interface VisualSeen {
  record: VisualRecord;
  held?: HeldReason;
  /** The step's reason when a page is broken. */
  broken?: string;
}

/**
 * A step is broken when a page is broken, held when a stable page changed or a page could not be
 * looked at, and passed otherwise. A page unstable before the write (its own noise over hold_over)
 * makes a change over hold_over advice only; a blank page, half its height gone or added, or a change
 * over restore_over is broken whatever its noise: noise does not explain a page gone.
 */
export function stepOutcome(pages: VisualPage[], visual: VisualSpec): VisualSeen {
  const broken = pages.find((p) => p.verdict === 'broken');
  if (broken) return { record: { outcome: 'broken', pages }, broken: `visual: ${brokenText(broken, visual)}` };
  const changed = pages.filter((p) => !p.unstable && p.verdict === 'changed').sort((a, b) => (b.changed_percent ?? 0) - (a.changed_percent ?? 0));
  if (changed.length > 0) return { record: { outcome: 'held', pages }, held: differenceReason(changed[0]!, visual) };
  const unchecked = pages.filter((p) => p.verdict === 'not checked');
  if (unchecked.length > 0) return { record: { outcome: 'not checked', pages }, held: uncheckedReason(unchecked, pages.length, visual) };
  return { record: { outcome: 'passed', pages } };
}

function brokenText(page: VisualPage, visual: VisualSpec): string {
  if (page.detail) return `${page.url} after the write: ${page.detail}`;
  return `${page.changed_percent}% of ${page.url} changed (restore_over ${percentText(visual.restore_over)})`;
}

/** The reason a step is held, with what overrides it: the update is on the site already, and stays unless a person restores it. */
function differenceReason(page: VisualPage, visual: VisualSpec): VisualDifference {
  const percent = page.changed_percent ?? 100;
  return {
    code: 'visual_difference',
    changed_percent: percent,
    url: page.url,
    diff: page.images?.diff ?? null,
    ...(visual.fail_on_hold ? { counts_against_budget: true as const } : {}),
    override: `the update stays; to accept it, nothing to do; to let such a change pass, raise health.visual.hold_over above ${percent}% (now ${percentText(visual.hold_over)}) or hide the part that changes with health.visual.hide`,
  };
}

/** Pages no screenshot could be taken of, before or after the write: nobody knows what the write did to them. */
function uncheckedReason(unchecked: VisualPage[], of: number, visual: VisualSpec): VisualUnchecked {
  const first = unchecked[0]!;
  return {
    code: 'visual_unchecked',
    url: first.url,
    unchecked: unchecked.length,
    detail: (first.detail ?? 'not shot').slice(0, 500),
    ...(visual.fail_on_hold ? { counts_against_budget: true as const } : {}),
    override: `the update stays; look at ${unchecked.length === 1 ? 'the page' : `the ${unchecked.length} pages of ${of}`} not checked yourself (the browser could not show ${unchecked.length === 1 ? 'it' : 'them'}), and run doctor if the browser is the cause`,
  };
}

/** A held step's reason, in words every sink shows: the code first, then what was found and where. */
export function heldText(held: HeldReason, page: VisualPage | undefined): string {
  if (held.code === 'visual_unchecked') {
    const more = held.unchecked > 1 ? ` (and ${held.unchecked - 1} more page${held.unchecked === 2 ? '' : 's'})` : '';
    return `${held.code}: not looked at, ${held.detail}, at ${held.url}${more}`;
  }
  const what = page?.detail ?? `${held.changed_percent}% of the page changed`;
  return `${held.code}: ${what} at ${held.url}${held.diff ? ` (diff ${held.diff})` : ''}`;
}
